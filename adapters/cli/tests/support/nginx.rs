//! nginx as a test's or bench's own process (`tests/http_nginx.rs`, the
//! `gateway_nginx` bench): Debian's package found where it installs, one process
//! (`master_process off`) run from a folder of its own, its config, logs and temporary
//! files in that folder.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The nginx binary, if the machine has one.
pub fn binary() -> Option<PathBuf> {
    ["nginx", "/usr/sbin/nginx"]
        .into_iter()
        .map(PathBuf::from)
        .find(|path| {
            Command::new(path)
                .arg("-v")
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
}

/// A config for one nginx process in `dir`: `worker_connections`, and `http` (the
/// `upstream` and `server` blocks) inside its `http { }` with access logs off and
/// every temporary path in `dir`.
pub fn config(dir: &Path, worker_connections: usize, http: &str) -> String {
    let d = dir.display();
    format!(
        "master_process off;\n\
         daemon off;\n\
         worker_processes 1;\n\
         pid {d}/nginx.pid;\n\
         error_log {d}/error.log warn;\n\
         events {{ worker_connections {worker_connections}; }}\n\
         http {{\n\
           access_log off;\n\
           client_body_temp_path {d}/body;\n\
           proxy_temp_path {d}/proxy;\n\
           fastcgi_temp_path {d}/fastcgi;\n\
           uwsgi_temp_path {d}/uwsgi;\n\
           scgi_temp_path {d}/scgi;\n\
         {http}\
         }}\n"
    )
}

/// Write `config` to `dir/nginx.conf` and start `nginx` on it (not waited for).
pub fn spawn(nginx: &Path, dir: &Path, config: &str, stderr: Stdio) -> std::io::Result<Child> {
    let path = dir.join("nginx.conf");
    std::fs::write(&path, config)?;
    Command::new(nginx)
        .arg("-p")
        .arg(dir)
        .arg("-e")
        .arg(dir.join("error.log"))
        .arg("-c")
        .arg(&path)
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
}
