//! A file's place in the page cache: how much of it is resident (mincore), and making it
//! cold (sync, then POSIX_FADV_DONTNEED: no root needed) or warm (read it through).

use std::fs::File;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::path::Path;

use anyhow::{bail, Context, Result};

use super::Residency;

fn open(path: &Path) -> Result<File> {
    File::open(path).with_context(|| format!("cannot open {}", path.display()))
}

/// The system's page size in bytes (LMDB's page is the operating system's).
pub fn page_size() -> usize {
    // SAFETY: sysconf reads a constant of the system.
    usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096).max(512)
}

/// The file's pages resident in the page cache, by mincore over a mapping of it that
/// nothing can read through (PROT_NONE: so mapping it brings nothing in, not even under
/// valgrind, which reads the head of every readable file mapping).
pub fn residency(path: &Path) -> Result<Residency> {
    let f = open(path)?;
    let len = f.metadata()?.len() as usize;
    let total = (len as u64).div_ceil(page_size() as u64);
    if len == 0 {
        return Ok(Residency { resident_pages: 0, total_pages: 0 });
    }
    let mut vec = vec![0u8; total as usize];
    // SAFETY: an inaccessible shared mapping of a file we hold open, unmapped before return;
    // mincore writes one byte per page into `vec`, which has one per page.
    let rc = unsafe {
        let addr = libc::mmap(std::ptr::null_mut(), len, libc::PROT_NONE, libc::MAP_SHARED, f.as_raw_fd(), 0);
        if addr == libc::MAP_FAILED {
            bail!("cannot map {}: {}", path.display(), std::io::Error::last_os_error());
        }
        let rc = libc::mincore(addr, len, vec.as_mut_ptr());
        libc::munmap(addr, len);
        rc
    };
    if rc != 0 {
        bail!("mincore on {}: {}", path.display(), std::io::Error::last_os_error());
    }
    let resident = vec.iter().filter(|b| **b & 1 == 1).count() as u64;
    Ok(Residency { resident_pages: resident, total_pages: total })
}

/// Writes the file's dirty pages back (they cannot be dropped), then asks the kernel to
/// drop all of its pages.
pub fn evict(path: &Path) -> Result<()> {
    let f = open(path)?;
    f.sync_all().with_context(|| format!("cannot sync {}", path.display()))?;
    // SAFETY: advice on a descriptor we hold.
    let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc != 0 {
        bail!("posix_fadvise(POSIX_FADV_DONTNEED) on {}: {}", path.display(), std::io::Error::from_raw_os_error(rc));
    }
    Ok(())
}

/// Drops this process's mapped pages of the file (MADV_DONTNEED over each range of it in
/// /proc/self/maps), so that the page cache may drop them too: a page some mapping still
/// holds is not evicted. Reads through those mappings fault the pages in again.
pub fn unmap_pages(path: &Path) -> Result<()> {
    for m in mappings(path)? {
        // SAFETY: a range the kernel lists as mapped from this file; MADV_DONTNEED on a
        // shared file mapping drops only this process's references, never the file's data.
        if unsafe { libc::madvise(m.from as *mut libc::c_void, m.to - m.from, libc::MADV_DONTNEED) } != 0 {
            bail!("madvise(MADV_DONTNEED) on {}'s map: {}", path.display(), std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Maps the file's first `bytes` into this process's page tables through its one mapping
/// of the file from offset 0, reading any page the page cache lacks, with one
/// `madvise(MADV_POPULATE_READ)` (Linux 5.14): what reading a byte of every page through
/// the map leaves, without a page fault apiece. Fails where there is no such mapping, or
/// more than one, or the kernel refuses the advice.
pub fn populate_head(path: &Path, bytes: u64) -> Result<()> {
    let maps = mappings(path)?;
    let [m] = maps[..] else { bail!("{} is mapped {} times here, not once", path.display(), maps.len()) };
    if m.offset != 0 {
        bail!("{}'s map starts at offset {}", path.display(), m.offset);
    }
    let len = (m.to - m.from).min(usize::try_from(bytes).unwrap_or(usize::MAX));
    // SAFETY: a range the kernel lists as mapped from this file.
    unsafe { populate(m.from, len) }.with_context(|| format!("madvise(MADV_POPULATE_READ) on {}'s map", path.display()))
}

/// Maps the `len` bytes from the page-aligned address `from` into this process's page
/// tables, reading any page the page cache lacks: one `madvise(MADV_POPULATE_READ)`
/// (Linux 5.14), which the kernel refuses on older kernels.
///
/// # Safety
/// The range lies inside one readable mapping of a file; advice to read it changes no byte.
pub unsafe fn populate(from: usize, len: usize) -> std::io::Result<()> {
    match libc::madvise(from as *mut libc::c_void, len, libc::MADV_POPULATE_READ) {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// One range of this process's address space mapped from a file.
#[derive(Debug, Clone, Copy)]
struct Mapping {
    from: usize,
    to: usize,
    /// The file offset it starts at.
    offset: u64,
}

/// This process's mappings of the file, from /proc/self/maps.
fn mappings(path: &Path) -> Result<Vec<Mapping>> {
    let path = std::fs::canonicalize(path).with_context(|| format!("cannot resolve {}", path.display()))?;
    let maps = std::fs::read_to_string("/proc/self/maps").context("cannot read /proc/self/maps")?;
    let mut out = Vec::new();
    for line in maps.lines().filter(|l| l.ends_with(&*path.to_string_lossy())) {
        let mut fields = line.split_whitespace();
        let range = fields.next().unwrap_or_default();
        let (from, to) = range.split_once('-').context("a /proc/self/maps line without its range")?;
        let offset = fields.nth(1).context("a /proc/self/maps line without its offset")?;
        let (from, to) = (usize::from_str_radix(from, 16)?, usize::from_str_radix(to, 16)?);
        out.push(Mapping { from, to, offset: u64::from_str_radix(offset, 16)? });
    }
    Ok(out)
}

/// Reads the whole file, so its pages are in the page cache.
pub fn warm(path: &Path) -> Result<()> {
    warm_head(path, u64::MAX)
}

/// Reads the file's first `bytes`, so those pages are in the page cache (or, past what a
/// memory limit holds, the last of them).
pub fn warm_head(path: &Path, bytes: u64) -> Result<()> {
    let mut f = open(path)?.take(bytes);
    let mut buf = vec![0u8; 1 << 20];
    while f.read(&mut buf).with_context(|| format!("cannot read {}", path.display()))? > 0 {}
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cold variant of migrate relies on this: after eviction, mincore finds the file
    /// non-resident. Needs a file system with a page cache (not tmpfs), as the runs do.
    #[test]
    fn an_evicted_file_is_not_resident_and_a_warmed_one_is() {
        let dir = tempfile::tempdir_in(std::env::var_os("LMDB_REGRESS_SCRATCH").unwrap_or(std::env::temp_dir().into()))
            .unwrap();
        let path = dir.path().join("data.mdb");
        std::fs::write(&path, vec![7u8; 4 << 20]).unwrap();
        warm(&path).unwrap();
        let before = residency(&path).unwrap();
        assert_eq!(before.total_pages, (4 << 20) / page_size() as u64);
        assert_eq!(before.resident_pages, before.total_pages, "a file just written and read is cached");
        evict(&path).unwrap();
        let after = residency(&path).unwrap();
        assert_eq!(after.resident_pages, 0, "{after:?}: is {} on tmpfs?", dir.path().display());
        warm(&path).unwrap();
        assert_eq!(residency(&path).unwrap().resident_pages, before.total_pages);
        // Pages this process maps stay cached until its mapping lets them go.
        let f = open(&path).unwrap();
        let len = 4 << 20;
        // SAFETY: a read-only shared mapping of a file held open, read, then unmapped.
        let map = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, f.as_raw_fd(), 0) };
        assert_ne!(map, libc::MAP_FAILED);
        let read: u64 = (0..len).step_by(4096).map(|i| u64::from(unsafe { *map.cast::<u8>().add(i) })).sum();
        assert_eq!(read, 7 * len as u64 / 4096);
        evict(&path).unwrap();
        assert_eq!(residency(&path).unwrap().resident_pages, before.total_pages, "mapped pages are not dropped");
        unmap_pages(&path).unwrap();
        evict(&path).unwrap();
        assert_eq!(residency(&path).unwrap().resident_pages, 0, "unmapped, then evicted");
        unsafe { libc::munmap(map, len) };
    }

    /// The KiB of this process's mapping at `start` present in its page tables (smaps' Rss).
    fn rss_kib(start: usize) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut lines = smaps.lines().skip_while(|l| !l.starts_with(&format!("{start:x}-")));
        let rss = lines.find_map(|l| l.strip_prefix("Rss:")).expect("the mapping is listed");
        rss.trim().trim_end_matches("kB").trim().parse().unwrap()
    }

    /// fault_in relies on this: the advice maps the pages asked for, through the file's one
    /// mapping, and fails where the file is not mapped (fault_in then walks).
    #[test]
    fn populating_maps_the_head_of_the_one_mapping() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.mdb");
        std::fs::write(&path, vec![7u8; 4 << 20]).unwrap();
        assert!(populate_head(&path, 1 << 20).is_err(), "not mapped here");
        let (f, len) = (open(&path).unwrap(), 4 << 20);
        // SAFETY: a read-only shared mapping of a file held open, unmapped at the end.
        let map = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, f.as_raw_fd(), 0) };
        assert_ne!(map, libc::MAP_FAILED);
        assert_eq!(rss_kib(map as usize), 0, "nothing read through the map yet");
        populate_head(&path, 1 << 20).unwrap();
        let mapped = rss_kib(map as usize);
        // The kernel may map a few pages around those asked for, never fewer.
        assert!((1024..4096).contains(&mapped), "{mapped} KiB mapped after asking for 1024");
        unsafe { libc::munmap(map, len) };
    }
}
