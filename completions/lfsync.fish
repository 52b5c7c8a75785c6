# fish completion for lfsync. Generated from the command model by
# `lfsync __generate-docs`; do not edit.
# Install as ~/.config/fish/completions/lfsync.fish (or in
# /usr/share/fish/vendor_completions.d/).

# The command is always the second word: lfsync accepts nothing else before it.
# (__fish_seen_subcommand_from would also match `lfsync help push`.)
function __fish_lfsync_command_is --argument-names name
    set -l tokens (commandline -opc)
    test (count $tokens) -ge 2; and test "$tokens[2]" = $name
end

# True when the word being completed is argument number $index of command
# $name; "2+" means argument 2 or any after it. The remaining arguments are
# the command's options that take a value: the word after one is its value.
function __fish_lfsync_argument_is --argument-names name index
    set -l tokens (commandline -opc)
    test (count $tokens) -ge 2; and test "$tokens[2]" = $name; or return 1
    set -l valued $argv[3..-1]
    set -l count 0
    set -l skip 0
    set -l only_arguments 0
    for token in $tokens[3..-1]
        if test $skip -eq 1
            set skip 0
        else if test $only_arguments -eq 0; and test "$token" = --
            set only_arguments 1
        else if test $only_arguments -eq 0; and string match -q -- '-?*' $token
            contains -- $token $valued; and set skip 1
        else
            set count (math $count + 1)
        end
    end
    # After an option that takes a value, or on an option name: not an argument.
    test $skip -eq 0; or return 1
    if test $only_arguments -eq 0; and string match -q -- '-*' (commandline -ct)
        return 1
    end
    set -l position (string replace '+' '' -- $index)
    if string match -q -- '*+' $index
        test $count -ge (math $position - 1)
    else
        test $count -eq (math $position - 1)
    end
end

# Command names with their abstracts, for the first word and for `help`.
function __fish_lfsync_commands
    printf '%s\t%s\n' 'init' 'Create this device\'s identity and state (safe to run again)'
    printf '%s\t%s\n' 'id' 'Print this device\'s Device ID and name'
    printf '%s\t%s\n' 'peers' 'Discover nearby devices and list trusted ones'
    printf '%s\t%s\n' 'trust' 'Trust a device by its Device ID'
    printf '%s\t%s\n' 'untrust' 'Stop trusting a device'
    printf '%s\t%s\n' 'serve' 'Receive from other devices into a library'
    printf '%s\t%s\n' 'sync' 'Keep a library in sync with other devices: serve and watch in one service'
    printf '%s\t%s\n' 'push' 'Send what peers lack: scan, offer, send only missing chunks'
    printf '%s\t%s\n' 'watch' 'Keep peers in sync continuously: send what changes as soon as it settles'
    printf '%s\t%s\n' 'pull' 'Receive what a trusted peer has that this device lacks'
    printf '%s\t%s\n' 'status' 'Show what is synced with which peer'
    printf '%s\t%s\n' 'whereis' 'Show which devices hold each asset'
    printf '%s\t%s\n' 'offload' 'Free space: delete local files that enough other devices verifiably hold'
    printf '%s\t%s\n' 'versions' 'List the versions a sync replaced or deleted'
    printf '%s\t%s\n' 'restore' 'Put back a version a sync replaced or deleted'
    printf '%s\t%s\n' 'scan' 'List the assets lfsync sees in a folder (what would be synced)'
    printf '%s\t%s\n' 'verify' 'Re-hash a library and report corrupted files'
    printf '%s\t%s\n' 'completions' 'Print a shell completion script'
    printf '%s\t%s\n' 'help' 'Show help for lfsync or one of its commands'
    printf '%s\t%s\n' 'version' 'Print the lfsync version'
end

# Peer names, one per line from `lfsync __complete peers`; nothing if it fails.
# Asks the program being completed, which need not be on PATH.
function __fish_lfsync_peers
    set -l program (commandline -opc)[1]
    set program (string replace -r '^~/' "$HOME/" -- $program)
    set -l peers (command $program __complete peers 2>/dev/null); or return 0
    printf '%s\n' $peers
end

# Files only where a value or argument is a file: see the lines with -F.
complete -c lfsync -f
complete -c lfsync -n __fish_use_subcommand -a '(__fish_lfsync_commands)'
complete -c lfsync -n __fish_use_subcommand -s h -l help -d 'Show help for the command.'
complete -c lfsync -n __fish_use_subcommand -l version -d 'Print the lfsync version.'

# lfsync init
complete -c lfsync -n '__fish_lfsync_command_is init' -l name -x -d 'The name other devices see (default: the host name).'
complete -c lfsync -n '__fish_lfsync_command_is init' -l json -d 'Print machine-readable JSON (stable keys) instead of text.'
complete -c lfsync -n '__fish_lfsync_command_is init' -s q -l quiet -d 'Print nothing but errors.'
complete -c lfsync -n '__fish_lfsync_command_is init' -s v -l verbose -d 'Print more detail.'
complete -c lfsync -n '__fish_lfsync_command_is init' -s h -l help -d 'Show help for the command.'

# lfsync id
complete -c lfsync -n '__fish_lfsync_command_is id' -l json -d 'Print machine-readable JSON (stable keys) instead of text.'
complete -c lfsync -n '__fish_lfsync_command_is id' -s q -l quiet -d 'Print nothing but errors.'
complete -c lfsync -n '__fish_lfsync_command_is id' -s v -l verbose -d 'Print more detail.'
complete -c lfsync -n '__fish_lfsync_command_is id' -s h -l help -d 'Show help for the command.'

# lfsync peers
complete -c lfsync -n '__fish_lfsync_command_is peers' -l timeout -x -d 'How long to browse (default 3).'
complete -c lfsync -n '__fish_lfsync_command_is peers' -l json -d 'Print machine-readable JSON (stable keys) instead of text.'
complete -c lfsync -n '__fish_lfsync_command_is peers' -s q -l quiet -d 'Print nothing but errors.'
complete -c lfsync -n '__fish_lfsync_command_is peers' -s v -l verbose -d 'Print more detail.'
complete -c lfsync -n '__fish_lfsync_command_is peers' -s h -l help -d 'Show help for the command.'

# lfsync trust
complete -c lfsync -n '__fish_lfsync_command_is trust' -l name -x -d 'A name to refer to the device by (default: its short ID).'
complete -c lfsync -n '__fish_lfsync_command_is trust' -l address -x -d 'Where to reach it when discovery cannot find it.'
complete -c lfsync -n '__fish_lfsync_command_is trust' -l auto-accept -d 'Accept its offers without asking.'
complete -c lfsync -n '__fish_lfsync_command_is trust' -l allow-pull -d 'Let it pull everything this device serves (not implied by --auto-accept).'
complete -c lfsync -n '__fish_lfsync_command_is trust' -l deletions -x -d 'What its deletions do here: asked (applied when its push says --delete; the default), mirror (always applied) or keep (never: an archive).'
complete -c lfsync -n '__fish_lfsync_command_is trust' -s q -l quiet -d 'Print nothing but errors.'
complete -c lfsync -n '__fish_lfsync_command_is trust' -s v -l verbose -d 'Print more detail.'
complete -c lfsync -n '__fish_lfsync_command_is trust' -s h -l help -d 'Show help for the command.'

# lfsync untrust
complete -c lfsync -n '__fish_lfsync_command_is untrust' -s q -l quiet -d 'Print nothing but errors.'
complete -c lfsync -n '__fish_lfsync_command_is untrust' -s v -l verbose -d 'Print more detail.'
complete -c lfsync -n '__fish_lfsync_command_is untrust' -s h -l help -d 'Show help for the command.'
complete -c lfsync -n '__fish_lfsync_argument_is untrust 1' -a '(__fish_lfsync_peers)' -d 'Name or Device ID (or a unique prefix).'

# lfsync serve
complete -c lfsync -n '__fish_lfsync_command_is serve' -l listen -x -d 'Address to listen on (default [::]:7878).'
complete -c lfsync -n '__fish_lfsync_command_is serve' -l no-advertise -d 'Do not advertise; peers connect by address.'
complete -c lfsync -n '__fish_lfsync_command_is serve' -l chmod -x -d 'Change the modes of received files and new folders, in rsync\'s --chmod syntax (e.g. Dg+s,ug+w,Fo-w or D2775,F664); the umask still applies.'
complete -c lfsync -n '__fish_lfsync_command_is serve' -l bwlimit -x -d 'Send at most RATE for the whole run, shared by every peer (KiB/s; K, M, G suffixes as rsync; 0 = no limit).'
complete -c lfsync -n '__fish_lfsync_command_is serve' -l exclude -x -d 'Leave out files matching PATTERN (gitignore syntax; repeatable; !PATTERN takes a file back).'
complete -c lfsync -n '__fish_lfsync_command_is serve' -l exclude-from -r -F -d 'Read exclude patterns from FILE, one per line (gitignore syntax).'
complete -c lfsync -n '__fish_lfsync_command_is serve' -l no-default-excludes -d 'Do not leave out .DS_Store, ._*, Thumbs.db, desktop.ini, @eaDir/, .thumbnails/, .Trash-*/ by default.'
complete -c lfsync -n '__fish_lfsync_command_is serve' -l library -x -a '(__fish_complete_directories)' -d 'Deprecated spelling of PATH.'
complete -c lfsync -n '__fish_lfsync_command_is serve' -s q -l quiet -d 'Print nothing but errors.'
complete -c lfsync -n '__fish_lfsync_command_is serve' -s v -l verbose -d 'Print more detail.'
complete -c lfsync -n '__fish_lfsync_command_is serve' -s h -l help -d 'Show help for the command.'
complete -c lfsync -n '__fish_lfsync_argument_is serve 1 --listen --chmod --bwlimit --exclude --exclude-from --library' -a '(__fish_complete_directories)' -d 'The library to receive into (created when missing).'

# lfsync sync
complete -c lfsync -n '__fish_lfsync_command_is sync' -l with -x -a '(__fish_lfsync_peers)' -d 'The devices to keep in sync with: names or Device IDs of trusted devices.'
complete -c lfsync -n '__fish_lfsync_command_is sync' -l all -d 'Send to every trusted peer.'
complete -c lfsync -n '__fish_lfsync_command_is sync' -l delete -d 'Ask each peer to apply this library\'s deletions (moved into its versions area), as rsync --delete.'
complete -c lfsync -n '__fish_lfsync_command_is sync' -l max-delete -x -d 'Apply no deletion on a peer that would get more than N of them.'
complete -c lfsync -n '__fish_lfsync_command_is sync' -l listen -x -d 'Address to listen on (default [::]:7878).'
complete -c lfsync -n '__fish_lfsync_command_is sync' -l no-advertise -d 'Do not advertise; peers connect by address.'
complete -c lfsync -n '__fish_lfsync_command_is sync' -l chmod -x -d 'Change the modes of received files and new folders, in rsync\'s --chmod syntax (e.g. Dg+s,ug+w,Fo-w or D2775,F664); the umask still applies.'
complete -c lfsync -n '__fish_lfsync_command_is sync' -l settle -x -d 'Send a file once nothing in its tree changed for this long (default 3).'
complete -c lfsync -n '__fish_lfsync_command_is sync' -l rescan-interval -x -d 'When inotify cannot watch the whole tree, rescan this often instead (default 60).'
complete -c lfsync -n '__fish_lfsync_command_is sync' -l bwlimit -x -d 'Send at most RATE for the whole run, shared by every peer (KiB/s; K, M, G suffixes as rsync; 0 = no limit).'
complete -c lfsync -n '__fish_lfsync_command_is sync' -l json -d 'Print machine-readable JSON (stable keys) instead of text.'
complete -c lfsync -n '__fish_lfsync_command_is sync' -l exclude -x -d 'Leave out files matching PATTERN (gitignore syntax; repeatable; !PATTERN takes a file back).'
complete -c lfsync -n '__fish_lfsync_command_is sync' -l exclude-from -r -F -d 'Read exclude patterns from FILE, one per line (gitignore syntax).'
complete -c lfsync -n '__fish_lfsync_command_is sync' -l no-default-excludes -d 'Do not leave out .DS_Store, ._*, Thumbs.db, desktop.ini, @eaDir/, .thumbnails/, .Trash-*/ by default.'
complete -c lfsync -n '__fish_lfsync_command_is sync' -s q -l quiet -d 'Print nothing but errors.'
complete -c lfsync -n '__fish_lfsync_command_is sync' -s v -l verbose -d 'Print more detail.'
complete -c lfsync -n '__fish_lfsync_command_is sync' -s h -l help -d 'Show help for the command.'
complete -c lfsync -n '__fish_lfsync_argument_is sync 1 --with --max-delete --listen --chmod --settle --rescan-interval --bwlimit --exclude --exclude-from' -a '(__fish_complete_directories)' -d 'The library to keep in sync (created when missing).'

# lfsync push
complete -c lfsync -n '__fish_lfsync_command_is push' -l to -x -a '(__fish_lfsync_peers)' -d 'Target peers: names, Device IDs (or unique prefixes) or HOST:PORT.'
complete -c lfsync -n '__fish_lfsync_command_is push' -l all -d 'Send to every trusted peer.'
complete -c lfsync -n '__fish_lfsync_command_is push' -l batch -d 'Unattended: never prompt, lock, quiet on success, strict exit codes.'
complete -c lfsync -n '__fish_lfsync_command_is push' -l dry-run -d 'Scan and show what would be offered; send nothing.'
complete -c lfsync -n '__fish_lfsync_command_is push' -l progress -x -a 'auto plain json none' -d 'Progress on stderr: auto (a terminal only), plain, json or none.'
complete -c lfsync -n '__fish_lfsync_command_is push' -l bwlimit -x -d 'Send at most RATE for the whole run, shared by every peer (KiB/s; K, M, G suffixes as rsync; 0 = no limit).'
complete -c lfsync -n '__fish_lfsync_command_is push' -l delete -d 'Ask each peer to apply this library\'s deletions (moved into its versions area), as rsync --delete.'
complete -c lfsync -n '__fish_lfsync_command_is push' -l max-delete -x -d 'Apply no deletion on a peer that would get more than N of them.'
complete -c lfsync -n '__fish_lfsync_command_is push' -l json -d 'Print machine-readable JSON (stable keys) instead of text.'
complete -c lfsync -n '__fish_lfsync_command_is push' -l exclude -x -d 'Leave out files matching PATTERN (gitignore syntax; repeatable; !PATTERN takes a file back).'
complete -c lfsync -n '__fish_lfsync_command_is push' -l exclude-from -r -F -d 'Read exclude patterns from FILE, one per line (gitignore syntax).'
complete -c lfsync -n '__fish_lfsync_command_is push' -l no-default-excludes -d 'Do not leave out .DS_Store, ._*, Thumbs.db, desktop.ini, @eaDir/, .thumbnails/, .Trash-*/ by default.'
complete -c lfsync -n '__fish_lfsync_command_is push' -s q -l quiet -d 'Print nothing but errors.'
complete -c lfsync -n '__fish_lfsync_command_is push' -s v -l verbose -d 'Print more detail.'
complete -c lfsync -n '__fish_lfsync_command_is push' -s h -l help -d 'Show help for the command.'
complete -c lfsync -n '__fish_lfsync_argument_is push 1+ --to --progress --bwlimit --max-delete --exclude --exclude-from' -a '(__fish_complete_directories)' -d 'Libraries, or folders of one, to send.'

# lfsync watch
complete -c lfsync -n '__fish_lfsync_command_is watch' -l to -x -a '(__fish_lfsync_peers)' -d 'Target peers: names, Device IDs (or unique prefixes) or HOST:PORT.'
complete -c lfsync -n '__fish_lfsync_command_is watch' -l all -d 'Send to every trusted peer.'
complete -c lfsync -n '__fish_lfsync_command_is watch' -l settle -x -d 'Send a file once nothing in its tree changed for this long (default 3).'
complete -c lfsync -n '__fish_lfsync_command_is watch' -l rescan-interval -x -d 'When inotify cannot watch the whole tree, rescan this often instead (default 60).'
complete -c lfsync -n '__fish_lfsync_command_is watch' -l bwlimit -x -d 'Send at most RATE for the whole run, shared by every peer (KiB/s; K, M, G suffixes as rsync; 0 = no limit).'
complete -c lfsync -n '__fish_lfsync_command_is watch' -l delete -d 'Ask each peer to apply this library\'s deletions (moved into its versions area), as rsync --delete.'
complete -c lfsync -n '__fish_lfsync_command_is watch' -l max-delete -x -d 'Apply no deletion on a peer that would get more than N of them.'
complete -c lfsync -n '__fish_lfsync_command_is watch' -l json -d 'Print machine-readable JSON (stable keys) instead of text.'
complete -c lfsync -n '__fish_lfsync_command_is watch' -l exclude -x -d 'Leave out files matching PATTERN (gitignore syntax; repeatable; !PATTERN takes a file back).'
complete -c lfsync -n '__fish_lfsync_command_is watch' -l exclude-from -r -F -d 'Read exclude patterns from FILE, one per line (gitignore syntax).'
complete -c lfsync -n '__fish_lfsync_command_is watch' -l no-default-excludes -d 'Do not leave out .DS_Store, ._*, Thumbs.db, desktop.ini, @eaDir/, .thumbnails/, .Trash-*/ by default.'
complete -c lfsync -n '__fish_lfsync_command_is watch' -s q -l quiet -d 'Print nothing but errors.'
complete -c lfsync -n '__fish_lfsync_command_is watch' -s v -l verbose -d 'Print more detail.'
complete -c lfsync -n '__fish_lfsync_command_is watch' -s h -l help -d 'Show help for the command.'
complete -c lfsync -n '__fish_lfsync_argument_is watch 1+ --to --settle --rescan-interval --bwlimit --max-delete --exclude --exclude-from' -a '(__fish_complete_directories)' -d 'Folders to watch and send.'

# lfsync pull
complete -c lfsync -n '__fish_lfsync_command_is pull' -l from -x -a '(__fish_lfsync_peers)' -d 'The peer to pull from (it must trust this device with --allow-pull).'
complete -c lfsync -n '__fish_lfsync_command_is pull' -l batch -d 'Unattended: never prompt, lock, quiet on success.'
complete -c lfsync -n '__fish_lfsync_command_is pull' -l dry-run -d 'Ask, and say what would be received and brought back; receive nothing.'
complete -c lfsync -n '__fish_lfsync_command_is pull' -l bwlimit -x -d 'Receive at most RATE for the whole run, shared by every peer (KiB/s; K, M, G suffixes as rsync; 0 = no limit).'
complete -c lfsync -n '__fish_lfsync_command_is pull' -l json -d 'Print machine-readable JSON (stable keys) instead of text.'
complete -c lfsync -n '__fish_lfsync_command_is pull' -l exclude -x -d 'Leave out files matching PATTERN (gitignore syntax; repeatable; !PATTERN takes a file back).'
complete -c lfsync -n '__fish_lfsync_command_is pull' -l exclude-from -r -F -d 'Read exclude patterns from FILE, one per line (gitignore syntax).'
complete -c lfsync -n '__fish_lfsync_command_is pull' -l no-default-excludes -d 'Do not leave out .DS_Store, ._*, Thumbs.db, desktop.ini, @eaDir/, .thumbnails/, .Trash-*/ by default.'
complete -c lfsync -n '__fish_lfsync_command_is pull' -l library -x -a '(__fish_complete_directories)' -d 'Deprecated spelling of PATH.'
complete -c lfsync -n '__fish_lfsync_command_is pull' -s q -l quiet -d 'Print nothing but errors.'
complete -c lfsync -n '__fish_lfsync_command_is pull' -s v -l verbose -d 'Print more detail.'
complete -c lfsync -n '__fish_lfsync_command_is pull' -s h -l help -d 'Show help for the command.'
complete -c lfsync -n '__fish_lfsync_argument_is pull 1 --from --bwlimit --exclude --exclude-from --library' -a '(__fish_complete_directories)' -d 'The library to receive into.'

# lfsync status
complete -c lfsync -n '__fish_lfsync_command_is status' -l peer -x -a '(__fish_lfsync_peers)' -d 'Only this peer.'
complete -c lfsync -n '__fish_lfsync_command_is status' -l json -d 'Print machine-readable JSON (stable keys) instead of text.'
complete -c lfsync -n '__fish_lfsync_command_is status' -s q -l quiet -d 'Print nothing but errors.'
complete -c lfsync -n '__fish_lfsync_command_is status' -s v -l verbose -d 'Print more detail.'
complete -c lfsync -n '__fish_lfsync_command_is status' -s h -l help -d 'Show help for the command.'
complete -c lfsync -n '__fish_lfsync_argument_is status 1 --peer' -a '(__fish_complete_directories)' -d 'Count only the assets in this library, or folder of one.'

# lfsync whereis
complete -c lfsync -n '__fish_lfsync_command_is whereis' -l missing-on -x -a '(__fish_lfsync_peers)' -d 'Only the assets PEER does not hold verified (not synced there).'
complete -c lfsync -n '__fish_lfsync_command_is whereis' -l json -d 'Print machine-readable JSON (stable keys) instead of text.'
complete -c lfsync -n '__fish_lfsync_command_is whereis' -s q -l quiet -d 'Print nothing but errors.'
complete -c lfsync -n '__fish_lfsync_command_is whereis' -s v -l verbose -d 'Print more detail.'
complete -c lfsync -n '__fish_lfsync_command_is whereis' -s h -l help -d 'Show help for the command.'
complete -c lfsync -n '__fish_lfsync_argument_is whereis 1+ --missing-on' -F -d 'A library, a folder in one or a file (repeatable; default: the current directory).'

# lfsync offload
complete -c lfsync -n '__fish_lfsync_command_is offload' -l copies -x -d 'How many other trusted devices must hold an asset, verified now, before it is deleted here.'
complete -c lfsync -n '__fish_lfsync_command_is offload' -l yes -d 'Delete. Without it, only list what would be deleted and the space it would free.'
complete -c lfsync -n '__fish_lfsync_command_is offload' -l no-proof -d 'Accept a device\'s word that it holds an asset, without the proof over its bytes (faster; a copy damaged on its disk may then count).'
complete -c lfsync -n '__fish_lfsync_command_is offload' -l peers -x -a '(__fish_lfsync_peers)' -d 'Ask only these trusted devices (repeatable; default: every trusted device).'
complete -c lfsync -n '__fish_lfsync_command_is offload' -l timeout -x -d 'How long each device may take to answer a check of up to 1,024 assets (default 300); one that takes longer does not count.'
complete -c lfsync -n '__fish_lfsync_command_is offload' -l json -d 'Print machine-readable JSON (stable keys) instead of text.'
complete -c lfsync -n '__fish_lfsync_command_is offload' -s q -l quiet -d 'Print nothing but errors.'
complete -c lfsync -n '__fish_lfsync_command_is offload' -s v -l verbose -d 'Print more detail.'
complete -c lfsync -n '__fish_lfsync_command_is offload' -s h -l help -d 'Show help for the command.'
complete -c lfsync -n '__fish_lfsync_argument_is offload 1+ --copies --peers --timeout' -F -d 'A library, or a folder or file in one (repeatable).'

# lfsync versions
complete -c lfsync -n '__fish_lfsync_command_is versions' -l json -d 'Print machine-readable JSON (stable keys) instead of text.'
complete -c lfsync -n '__fish_lfsync_command_is versions' -s q -l quiet -d 'Print nothing but errors.'
complete -c lfsync -n '__fish_lfsync_command_is versions' -s v -l verbose -d 'Print more detail.'
complete -c lfsync -n '__fish_lfsync_command_is versions' -s h -l help -d 'Show help for the command.'
complete -c lfsync -n '__fish_lfsync_argument_is versions 1' -F -d 'A file or folder of a library lfsync knows.'

# lfsync restore
complete -c lfsync -n '__fish_lfsync_command_is restore' -l at -x -d 'The version kept at or before TIME (2026-12-05T10:20:00Z, 2026-12-05 10:20, or a day).'
complete -c lfsync -n '__fish_lfsync_command_is restore' -s q -l quiet -d 'Print nothing but errors.'
complete -c lfsync -n '__fish_lfsync_command_is restore' -s v -l verbose -d 'Print more detail.'
complete -c lfsync -n '__fish_lfsync_command_is restore' -s h -l help -d 'Show help for the command.'
complete -c lfsync -n '__fish_lfsync_argument_is restore 1 --at' -F -d 'A file or folder of a library lfsync knows (it may be gone now).'

# lfsync scan
complete -c lfsync -n '__fish_lfsync_command_is scan' -l json -d 'Print machine-readable JSON (stable keys) instead of text.'
complete -c lfsync -n '__fish_lfsync_command_is scan' -l no-cache -d 'Hash every file; neither read nor update the scan cache.'
complete -c lfsync -n '__fish_lfsync_command_is scan' -l exclude -x -d 'Leave out files matching PATTERN (gitignore syntax; repeatable; !PATTERN takes a file back).'
complete -c lfsync -n '__fish_lfsync_command_is scan' -l exclude-from -r -F -d 'Read exclude patterns from FILE, one per line (gitignore syntax).'
complete -c lfsync -n '__fish_lfsync_command_is scan' -l no-default-excludes -d 'Do not leave out .DS_Store, ._*, Thumbs.db, desktop.ini, @eaDir/, .thumbnails/, .Trash-*/ by default.'
complete -c lfsync -n '__fish_lfsync_command_is scan' -s q -l quiet -d 'Print nothing but errors.'
complete -c lfsync -n '__fish_lfsync_command_is scan' -s v -l verbose -d 'Print more detail.'
complete -c lfsync -n '__fish_lfsync_command_is scan' -s h -l help -d 'Show help for the command.'
complete -c lfsync -n '__fish_lfsync_argument_is scan 1 --exclude --exclude-from' -a '(__fish_complete_directories)' -d 'The library folder to scan.'

# lfsync verify
complete -c lfsync -n '__fish_lfsync_command_is verify' -l repair -d 'Heal corrupt files: fetch only their bad chunks from a trusted device that holds them verified, check them, and replace each file atomically, keeping the damaged copy in .lfsync/damaged.'
complete -c lfsync -n '__fish_lfsync_command_is verify' -l from -x -a '(__fish_lfsync_peers)' -d 'With --repair: fetch from this trusted device (default: the first that answers the holding check "held and verified").'
complete -c lfsync -n '__fish_lfsync_command_is verify' -l clear-damaged -d 'Remove the damaged copies earlier repairs kept in .lfsync/damaged, and nothing else.'
complete -c lfsync -n '__fish_lfsync_command_is verify' -l json -d 'Print machine-readable JSON (stable keys) instead of text.'
complete -c lfsync -n '__fish_lfsync_command_is verify' -l library -x -a '(__fish_complete_directories)' -d 'Deprecated spelling of PATH.'
complete -c lfsync -n '__fish_lfsync_command_is verify' -s q -l quiet -d 'Print nothing but errors.'
complete -c lfsync -n '__fish_lfsync_command_is verify' -s v -l verbose -d 'Print more detail.'
complete -c lfsync -n '__fish_lfsync_command_is verify' -s h -l help -d 'Show help for the command.'
complete -c lfsync -n '__fish_lfsync_argument_is verify 1 --from --library' -a '(__fish_complete_directories)' -d 'The library to verify (default: the library the current directory is in).'

# lfsync completions
complete -c lfsync -n '__fish_lfsync_command_is completions' -s q -l quiet -d 'Print nothing but errors.'
complete -c lfsync -n '__fish_lfsync_command_is completions' -s v -l verbose -d 'Print more detail.'
complete -c lfsync -n '__fish_lfsync_command_is completions' -s h -l help -d 'Show help for the command.'
complete -c lfsync -n '__fish_lfsync_argument_is completions 1' -a 'bash zsh fish' -d 'bash, zsh or fish.'

# lfsync help
complete -c lfsync -n '__fish_lfsync_command_is help' -s q -l quiet -d 'Print nothing but errors.'
complete -c lfsync -n '__fish_lfsync_command_is help' -s v -l verbose -d 'Print more detail.'
complete -c lfsync -n '__fish_lfsync_command_is help' -s h -l help -d 'Show help for the command.'
complete -c lfsync -n '__fish_lfsync_argument_is help 1' -a '(__fish_lfsync_commands)' -d 'The command to explain.'

# lfsync version
complete -c lfsync -n '__fish_lfsync_command_is version' -s q -l quiet -d 'Print nothing but errors.'
complete -c lfsync -n '__fish_lfsync_command_is version' -s v -l verbose -d 'Print more detail.'
complete -c lfsync -n '__fish_lfsync_command_is version' -s h -l help -d 'Show help for the command.'
