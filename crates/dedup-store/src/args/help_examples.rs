//! The "Examples:" of `dedup store --help` and of each store command's `--help`: lines a
//! newcomer can paste, with the repository given as restic users give it.

/// After `dedup store --help`.
pub const STORE: &str = "\
Examples:
  export DEDUP_REPO=/srv/backup                 # or pass -r /srv/backup to every command
  dedup store init                              # asks for a new password
  dedup store backup ~/Documents ~/Photos       # a snapshot of both
  dedup store snapshots                         # what the repository holds
  dedup store restore latest --target /tmp/restored
  dedup store forget --keep-daily 7 --keep-weekly 4 --prune

The password comes from DEDUP_PASSWORD, --password-file, --password-command or a prompt. A
repository on object storage is s3:https://HOST/BUCKET/PATH (credentials from AWS_ACCESS_KEY_ID
and AWS_SECRET_ACCESS_KEY), over SSH sftp:USER@HOST:/PATH. Run `dedup store COMMAND --help` for
each command's options and examples.";

/// After `dedup store init --help`.
pub const INIT: &str = "\
Examples:
  dedup store -r /srv/backup init
  dedup store -r s3:https://s3.example.com/bucket/backup init
  dedup store -r /srv/images init --chunker fixed:1MiB    # disk images";

/// After `dedup store backup --help`.
pub const BACKUP: &str = "\
Examples:
  dedup store -r /srv/backup backup ~
  dedup store -r /srv/backup backup --tag daily --exclude '*.tmp' --exclude-caches /home /etc
  dedup store -r /srv/backup backup --files-from list.txt --one-file-system
  pg_dump db | dedup store -r /srv/backup backup --stdin --stdin-filename db.sql";

/// After `dedup store snapshots --help`.
pub const SNAPSHOTS: &str = "\
Examples:
  dedup store -r /srv/backup snapshots
  dedup store -r /srv/backup snapshots --host laptop --path /home/me --json";

/// After `dedup store ls --help`.
pub const LS: &str = "\
Examples:
  dedup store -r /srv/backup ls latest
  dedup store -r /srv/backup ls -l 1a2b3c4d /home/me/Documents";

/// After `dedup store restore --help`.
pub const RESTORE: &str = "\
Examples:
  dedup store -r /srv/backup restore latest --target /tmp/restored
  dedup store -r /srv/backup restore 1a2b3c4d:/home/me/Documents --target ~/Documents-old
  dedup store -r /srv/backup restore latest --target / --include '*.conf' --verify
  dedup store -r /srv/backup restore latest --target ~/work --overwrite if-changed --delete -n";

/// After `dedup store dump --help`.
pub const DUMP: &str = "\
Examples:
  dedup store -r /srv/backup dump latest /etc/fstab
  dedup store -r /srv/backup dump 1a2b3c4d /home/me/disk.img -o /tmp/disk.img";

/// After `dedup store diff --help`.
pub const DIFF: &str = "\
Example:
  dedup store -r /srv/backup diff 1a2b3c4d latest      # + added, - removed, M modified";

/// After `dedup store mount --help`.
pub const MOUNT: &str = "\
Examples:
  mkdir /mnt/snapshots && dedup store -r /srv/backup mount /mnt/snapshots
  ls /mnt/snapshots/latest/home/me                 # in another terminal; fusermount3 -u to end
  dedup store -r /srv/backup mount --writable scratch /mnt/scratch";

/// After `dedup store stats --help`.
pub const STATS: &str = "\
Examples:
  dedup store -r /srv/backup stats
  dedup store -r /srv/backup stats --json";

/// After `dedup store check --help`.
pub const CHECK: &str = "\
Examples:
  dedup store -r /srv/backup check
  dedup store -r /srv/backup check --read-data-subset 1/7     # a seventh of the data each day
  dedup store -r /srv/backup check --read-data";

/// After `dedup store key --help`.
pub const KEY: &str = "\
Examples:
  dedup store -r /srv/backup key list
  dedup store -r /srv/backup key add --new-password-file second-password
  dedup store -r /srv/backup key passwd";

/// After `dedup store forget --help`.
pub const FORGET: &str = "\
Examples:
  dedup store -r /srv/backup forget --keep-daily 7 --keep-weekly 4 --keep-monthly 12 -n
  dedup store -r /srv/backup forget --keep-last 3 --host laptop --prune
  dedup store -r /srv/backup forget 1a2b3c4d";

/// After `dedup store prune --help`.
pub const PRUNE: &str = "\
Examples:
  dedup store -r /srv/backup prune -n
  dedup store -r /srv/backup prune --max-unused 0     # repack until no unused byte is left";

/// After `dedup store repair --help`.
pub const REPAIR: &str = "\
Examples:
  dedup store -r /srv/backup check                    # first: what is damaged
  dedup store -r /srv/backup repair index --read-data
  dedup store -r /srv/backup repair snapshots --forget";

/// After `dedup store find --help`.
pub const FIND: &str = "\
Examples:
  dedup store -r /srv/backup find '*.pdf'
  dedup store -r /srv/backup find -i 'report*' --host laptop --oldest 2026-01-01
  dedup store -r /srv/backup find /home/me/.ssh/id_ed25519 --json";

/// After `dedup store tag --help`.
pub const TAG: &str = "\
Examples:
  dedup store -r /srv/backup tag --add keep 1a2b3c4d
  dedup store -r /srv/backup tag --remove daily --add weekly --host laptop
  dedup store -r /srv/backup tag --set ''             # remove every tag of every snapshot";

/// After `dedup store rewrite --help`.
pub const REWRITE: &str = "\
Examples (remove a leaked secret from every snapshot, then its bytes from the repository):
  dedup store -r /srv/backup find .env                # which snapshots hold it
  dedup store -r /srv/backup rewrite --exclude /home/me/app/.env -n
  dedup store -r /srv/backup rewrite --exclude /home/me/app/.env --forget
  dedup store -r /srv/backup prune --max-unused 0";

/// After `dedup store copy --help`.
pub const COPY: &str = "\
Examples:
  dedup store -r s3:https://s3.example.com/bucket/backup copy --from-repo /srv/backup
  dedup store -r /mnt/usb/backup copy --from-repo /srv/backup \\
      --from-password-file ~/.backup-password --host laptop --tag daily";

#[cfg(test)]
mod tests {
    use clap::{Parser, Subcommand};

    use crate::args::StoreArgs;

    /// `dedup store …` as the binary parses it.
    #[derive(Debug, Parser)]
    #[command(name = "dedup")]
    struct Cli {
        #[command(subcommand)]
        command: Command,
    }

    #[derive(Debug, Subcommand)]
    enum Command {
        Store(StoreArgs),
    }

    /// Each `dedup …` command of an example, split into words as a shell would (single quotes
    /// only, comments and `\` line ends handled).
    fn commands(text: &str) -> Vec<Vec<String>> {
        let joined = text.replace("\\\n", " ");
        let mut out = Vec::new();
        // Examples are indented; prose is not.
        for line in joined.lines().filter(|l| l.starts_with("  ")) {
            let line = line.split(" #").next().unwrap_or_default();
            let Some(at) = line.find("dedup ") else { continue };
            let command = line[at..].split(" && ").next().unwrap_or_default();
            let words = command.split_whitespace().map(|w| w.trim_matches('\'').to_string());
            out.push(words.collect());
        }
        out
    }

    /// Every example parses: its options exist and their values are accepted (`--help`
    /// appended, so that nothing runs).
    #[test]
    fn every_example_parses() {
        let all = [
            super::STORE,
            super::INIT,
            super::BACKUP,
            super::SNAPSHOTS,
            super::LS,
            super::RESTORE,
            super::DUMP,
            super::DIFF,
            super::MOUNT,
            super::STATS,
            super::CHECK,
            super::KEY,
            super::FORGET,
            super::PRUNE,
            super::REPAIR,
            super::FIND,
            super::TAG,
            super::REWRITE,
            super::COPY,
        ];
        let mut seen = 0;
        for text in all {
            for mut words in commands(text) {
                words.push("--help".into());
                let err = Cli::try_parse_from(&words).expect_err("--help ends the parse");
                assert_eq!(err.kind(), clap::error::ErrorKind::DisplayHelp, "{words:?}: {err}");
                seen += 1;
            }
        }
        assert!(seen > 40, "{seen} examples");
    }
}
