//! The upstream archive over HTTPS: a tarball of one tag, unpacked and searched for liblmdb.

use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::{find_source_dir, Delivered};

/// OpenLDAP's GitLab, limited to liblmdb; then the GitHub mirror (which lacks some tags).
pub const DEFAULT_URLS: [&str; 2] = [
    "https://git.openldap.org/openldap/openldap/-/archive/{ref}/openldap-{ref}.tar.gz?path=libraries/liblmdb",
    "https://github.com/LMDB/lmdb/archive/refs/tags/{ref}.tar.gz",
];

/// Largest archive we accept: liblmdb's directory is well under this.
const MAX_BYTES: u64 = 64 << 20;

pub fn fetch(url: &str, dir: &Path) -> Result<Delivered> {
    let agent =
        ureq::AgentBuilder::new().timeout_connect(Duration::from_secs(10)).timeout(Duration::from_secs(120)).build();
    let resp = match agent.get(url).call() {
        Ok(r) => r,
        Err(ureq::Error::Status(code, _)) => bail!("HTTP {code}"),
        Err(ureq::Error::Transport(t)) => {
            bail!("unreachable ({}: {})", t.kind(), t.message().unwrap_or(""))
        }
    };
    let mut body = Vec::new();
    use std::io::Read;
    resp.into_reader().take(MAX_BYTES + 1).read_to_end(&mut body).context("download broke off")?;
    if body.len() as u64 > MAX_BYTES {
        bail!("archive is larger than {MAX_BYTES} bytes");
    }
    let unpacked = dir.join("unpacked");
    std::fs::create_dir_all(&unpacked)?;
    tar::Archive::new(flate2::read::GzDecoder::new(&body[..]))
        .unpack(&unpacked)
        .context("not a gzip-compressed tar archive")?;
    let src = find_source_dir(&unpacked)?;
    Ok(Delivered { dir: src, detail: url.to_string(), commit: None })
}
