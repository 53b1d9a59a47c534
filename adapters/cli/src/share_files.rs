//! The man pages and shell completions of the `backstop` command, generated from its
//! clap definition (clap_mangen, clap_complete) into a `share` directory laid out as
//! a prefix's `share/` is: what the Python wheel and the npm package ship.
//!
//! ```text
//! DIR/man/man1/backstop.1, backstop-proxy.1, backstop-gateway.1
//! DIR/bash-completion/completions/backstop
//! DIR/zsh/site-functions/_backstop
//! DIR/fish/vendor_completions.d/backstop.fish
//! ```

use std::fs;
use std::io;
use std::path::Path;

use clap::Command;
use clap_complete::Shell;

/// Writes every man page and completion script for `command` under `dir`.
pub fn write(mut command: Command, dir: &Path) -> io::Result<()> {
    let man_dir = dir.join("man/man1");
    fs::create_dir_all(&man_dir)?;
    // A page per command, hidden ones left out: backstop.1, backstop-proxy.1, …
    clap_mangen::generate_to(command.clone(), &man_dir)?;
    for (shell, place) in [
        (Shell::Bash, "bash-completion/completions/backstop"),
        (Shell::Zsh, "zsh/site-functions/_backstop"),
        (Shell::Fish, "fish/vendor_completions.d/backstop.fish"),
    ] {
        let path = dir.join(place);
        if let Some(folder) = path.parent() {
            fs::create_dir_all(folder)?;
        }
        let mut script = Vec::new();
        clap_complete::generate(shell, &mut command, "backstop", &mut script);
        fs::write(path, script)?;
    }
    Ok(())
}
