//! Packages on the registries that bundle liblmdb, fetched with the ordinary clients:
//! `cargo vendor` for crates, `pip download` for PyPI source distributions.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};

use super::Delivered;
use crate::manifest::{Registry, RegistryCopy, SOURCE_FILES};

pub fn fetch(copy: &RegistryCopy, dir: &Path) -> Result<Delivered> {
    let root = match copy.registry {
        Registry::Crate => vendor_crate(copy, dir)?,
        Registry::Pypi => download_sdist(copy, dir)?,
    };
    let src = root.join(copy.subdir.trim_end_matches('/'));
    if let Some(f) = SOURCE_FILES.iter().find(|f| !src.join(f).is_file()) {
        bail!("{} has no {}/{f}", copy.describe(), copy.subdir);
    }
    Ok(Delivered { dir: src, detail: copy.describe(), commit: None })
}

fn run(cmd: &mut Command, what: &str) -> Result<()> {
    let out = crate::children::output(cmd).with_context(|| format!("cannot start {what}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(6).collect();
        bail!("{what} failed: {}", tail.into_iter().rev().collect::<Vec<_>>().join(" | "));
    }
    Ok(())
}

/// A throw-away manifest depending on exactly that version, vendored.
fn vendor_crate(copy: &RegistryCopy, dir: &Path) -> Result<std::path::PathBuf> {
    let proj = dir.join("fetch");
    std::fs::create_dir_all(proj.join("src"))?;
    std::fs::write(
        proj.join("Cargo.toml"),
        format!(
            "[package]\nname = \"lmdb-regress-fetch\"\nversion = \"0.0.0\"\nedition = \"2018\"\n\n\
             [dependencies]\n{} = \"={}\"\n\n[workspace]\n",
            copy.package, copy.version
        ),
    )?;
    std::fs::write(proj.join("src/lib.rs"), "")?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    run(
        Command::new(cargo)
            .current_dir(&proj)
            .args(["vendor", "--versioned-dirs", "--quiet", "vendor"])
            .env_remove("CARGO_TARGET_DIR"),
        &format!("cargo vendor of {} {}", copy.package, copy.version),
    )?;
    let crate_dir = proj.join("vendor").join(format!("{}-{}", copy.package, copy.version));
    if !crate_dir.is_dir() {
        bail!("cargo vendor left no {}", crate_dir.display());
    }
    Ok(crate_dir)
}

/// The source distribution only, no dependencies, no wheel.
fn download_sdist(copy: &RegistryCopy, dir: &Path) -> Result<std::path::PathBuf> {
    let dl = dir.join("download");
    std::fs::create_dir_all(&dl)?;
    let python = std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into());
    run(
        Command::new(python)
            .args(["-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:"])
            .arg(format!("{}=={}", copy.package, copy.version))
            .arg("-d")
            .arg(&dl)
            .env("PIP_DISABLE_PIP_VERSION_CHECK", "1"),
        &format!("pip download of {} {}", copy.package, copy.version),
    )?;
    let sdist = std::fs::read_dir(&dl)?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with(".tar.gz"))
        .with_context(|| format!("pip left no .tar.gz source distribution in {}", dl.display()))?;
    let unpacked = dir.join("unpacked");
    tar::Archive::new(flate2::read::GzDecoder::new(std::fs::File::open(&sdist)?))
        .unpack(&unpacked)
        .with_context(|| format!("cannot unpack {}", sdist.display()))?;
    // An sdist unpacks into NAME-VERSION/; the subdir is relative to that.
    let top = std::fs::read_dir(&unpacked)?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.is_dir())
        .context("empty source distribution")?;
    Ok(top)
}
