//! A small DevTools client for tests/browser.rs: Debian's chromium, headless, spoken to over
//! `--remote-debugging-pipe` (JSON messages ended by a NUL byte, commands on its fd 3,
//! replies and events on its fd 4). Only the handful of protocol methods the tests call are
//! used, by name, so the tests need neither a websocket stack nor a generated protocol
//! crate (headless_chrome and its dependencies took most of a cold `make test`'s build).

use std::cell::{Cell, RefCell};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{json, Value};

/// How long any one reply or awaited event may take.
const TIMEOUT: Duration = Duration::from_secs(60);

/// A running headless chromium with a profile of its own, killed when dropped.
pub struct Chromium {
    child: Child,
    commands: std::io::PipeWriter,
    replies: Receiver<Value>,
    next_id: Cell<u64>,
    /// Events not yet looked at, in arrival order.
    events: RefCell<Vec<Value>>,
    _profile: tempfile::TempDir,
}

/// One page (target) of the browser, attached in flat mode: its commands carry its session.
pub struct Tab<'a> {
    browser: &'a Chromium,
    session: String,
}

/// Puts `from` on descriptor `to` in the child, inheritable (dup2 clears close-on-exec; a
/// descriptor already in place only has that flag cleared).
fn place(from: i32, to: i32) -> std::io::Result<()> {
    let ok = if from == to {
        // SAFETY: fcntl on a descriptor this process owns.
        unsafe { libc::fcntl(to, libc::F_SETFD, 0) }
    } else {
        // SAFETY: dup2 between descriptors this process owns.
        unsafe { libc::dup2(from, to) }
    };
    if ok < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

impl Chromium {
    /// Starts `binary` headless with `flags`; Err says why it cannot.
    pub fn launch(binary: &Path, flags: &[&str]) -> Result<Chromium, String> {
        let profile = tempfile::tempdir().map_err(|e| e.to_string())?;
        let (their_commands, commands) = std::io::pipe().map_err(|e| e.to_string())?;
        let (mut replies_in, their_replies) = std::io::pipe().map_err(|e| e.to_string())?;
        let (cmd_fd, reply_fd) = (their_commands.as_raw_fd(), their_replies.as_raw_fd());
        let mut c = Command::new(binary);
        c.args(["--headless", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu"])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .args(flags)
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: only async-signal-safe calls (fcntl, dup2) between fork and exec. The pipe
        // ends are first moved above 10, so that placing one on 3 cannot clobber the other.
        unsafe {
            c.pre_exec(move || {
                let high = |fd: i32| match libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 10) {
                    n if n < 0 => Err(std::io::Error::last_os_error()),
                    n => Ok(n),
                };
                let (cmd, reply) = (high(cmd_fd)?, high(reply_fd)?);
                place(cmd, 3)?;
                place(reply, 4)
            });
        }
        let child = c.spawn().map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
        drop((their_commands, their_replies));
        let (tx, replies) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut pending = Vec::new();
            let mut buf = [0u8; 1 << 16];
            while let Ok(n) = replies_in.read(&mut buf) {
                if n == 0 {
                    break;
                }
                pending.extend_from_slice(&buf[..n]);
                while let Some(end) = pending.iter().position(|b| *b == 0) {
                    let message: Vec<u8> = pending.drain(..=end).collect();
                    let Ok(v) = serde_json::from_slice::<Value>(&message[..end]) else { continue };
                    if tx.send(v).is_err() {
                        return;
                    }
                }
            }
        });
        let browser = Chromium {
            child,
            commands,
            replies,
            next_id: Cell::new(1),
            events: RefCell::new(Vec::new()),
            _profile: profile,
        };
        browser.call(None, "Browser.getVersion", json!({})).map(|_| browser)
    }

    /// One command and its result; events that arrive meanwhile are kept.
    pub fn call(&self, session: Option<&str>, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let Some(s) = session {
            message["sessionId"] = json!(s);
        }
        let mut bytes = serde_json::to_vec(&message).map_err(|e| e.to_string())?;
        bytes.push(0);
        (&self.commands).write_all(&bytes).map_err(|e| format!("{method}: chromium is gone ({e})"))?;
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let v = self.next_message(deadline).map_err(|e| format!("{method}: {e}"))?;
            if v["id"] == id {
                return match v.get("error") {
                    Some(e) => Err(format!("{method}: {e}")),
                    None => Ok(v["result"].clone()),
                };
            }
        }
    }

    /// The next message; an event is also kept for [`Chromium::wait_for`] and [`Tab::events`].
    fn next_message(&self, deadline: Instant) -> Result<Value, String> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.replies.recv_timeout(left) {
            Ok(v) => {
                if v.get("method").is_some() {
                    self.events.borrow_mut().push(v.clone());
                }
                Ok(v)
            }
            Err(RecvTimeoutError::Timeout) => Err(format!("no reply within {} s", TIMEOUT.as_secs())),
            Err(RecvTimeoutError::Disconnected) => Err("chromium closed its end".into()),
        }
    }

    /// Waits for event `method` of `session`, consuming it.
    fn wait_for(&self, session: &str, method: &str) -> Result<Value, String> {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let mut events = self.events.borrow_mut();
            if let Some(i) = events.iter().position(|e| e["method"] == method && e["sessionId"] == session) {
                return Ok(events.remove(i));
            }
            drop(events);
            self.next_message(deadline).map_err(|e| format!("waiting for {method}: {e}"))?;
        }
    }

    /// "Chrome/156.0.8078.114", as `Browser.getVersion` names the product.
    pub fn version(&self) -> String {
        let v = self.call(None, "Browser.getVersion", json!({})).expect("Browser.getVersion");
        v["product"].as_str().unwrap_or_default().to_string()
    }

    /// A new blank page, attached, with page events on.
    pub fn new_tab(&self) -> Tab<'_> {
        let target = self.call(None, "Target.createTarget", json!({ "url": "about:blank" })).expect("a new page");
        let attached = self
            .call(None, "Target.attachToTarget", json!({ "targetId": target["targetId"], "flatten": true }))
            .expect("attached to the new page");
        let tab = Tab { browser: self, session: attached["sessionId"].as_str().unwrap_or_default().to_string() };
        tab.call("Page.enable", json!({}));
        tab
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Tab<'_> {
    /// A command on this page; a protocol error fails the test, naming the method.
    pub fn call(&self, method: &str, params: Value) -> Value {
        self.browser.call(Some(&self.session), method, params).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Loads `url` and waits for its load event.
    pub fn navigate(&self, url: &str) {
        self.call("Page.navigate", json!({ "url": url }));
        self.browser.wait_for(&self.session, "Page.loadEventFired").unwrap_or_else(|e| panic!("{url}: {e}"));
    }

    /// A JSON value computed in the page.
    pub fn eval(&self, js: &str) -> Value {
        let r = self
            .call("Runtime.evaluate", json!({ "expression": format!("JSON.stringify({js})"), "returnByValue": true }));
        let text = r["result"]["value"].as_str().unwrap_or_else(|| panic!("{js} gave {r}"));
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{js} gave {text}: {e}"))
    }

    /// Every event of this page so far (network requests, log entries, console calls, exceptions).
    pub fn events(&self) -> Vec<Value> {
        // Events still in the pipe come first: a harmless call flushes them in.
        self.call("Runtime.evaluate", json!({ "expression": "0" }));
        self.browser.events.borrow().iter().filter(|e| e["sessionId"] == self.session.as_str()).cloned().collect()
    }

    /// A left click in the middle of the first element `selector` finds, through the same
    /// input events a mouse makes (after scrolling it into view).
    pub fn click(&self, selector: &str) {
        let js = format!(
            "(() => {{ const e = document.querySelector({sel}); e.scrollIntoView({{block: 'center'}}); \
             const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()",
            sel = json!(selector)
        );
        let at = self.eval(&js);
        let (x, y) = (at[0].as_f64().expect("x"), at[1].as_f64().expect("y"));
        for kind in ["mouseMoved", "mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({ "type": kind, "x": x, "y": y, "button": "left", "clickCount": 1 }),
            );
        }
    }

    /// A PNG of the viewport.
    pub fn screenshot(&self) -> Vec<u8> {
        let r = self.call("Page.captureScreenshot", json!({ "format": "png", "fromSurface": true }));
        decode(&r["data"])
    }

    /// The page as a PDF, with print media.
    pub fn print_to_pdf(&self) -> Vec<u8> {
        decode(&self.call("Page.printToPDF", json!({}))["data"])
    }
}

fn decode(data: &Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD.decode(data.as_str().expect("base64 data")).expect("valid base64")
}
