# bash completion for lfsync                                -*- shell-script -*-
# Generated from the command model by `lfsync __generate-docs`; do not edit.
# Install as /usr/share/bash-completion/completions/lfsync, or add
# `source <(lfsync completions bash)` to ~/.bashrc.

# Rebuilds the command line as lfsync's parser sees it. Bash splits words at
# COMP_WORDBREAKS characters, so `--address=nas.local:7878` arrives as five
# words; words not separated by blanks in COMP_LINE are glued back into one.
# Sets __lfsync_words and __lfsync_cword; without COMP_LINE (a caller
# that set only COMP_WORDS), the words are taken as they are.
__lfsync_split() {
    local line=$COMP_LINE rest word i lost=0 glue
    __lfsync_words=() __lfsync_cword=0
    [[ -n $line ]] || lost=1
    for (( i = 0; i < ${#COMP_WORDS[@]}; i++ )); do
        word=${COMP_WORDS[i]} glue=0
        if (( lost == 0 )); then
            rest=${line#"${line%%[![:space:]]*}"}
            if [[ $rest == "$word"* ]]; then
                (( i > 0 && ${#rest} == ${#line} )) && glue=1
                line=${rest:${#word}}
            else
                lost=1
            fi
        fi
        if (( glue )); then
            __lfsync_words[-1]+=$word
        else
            __lfsync_words+=("$word")
        fi
        (( i == COMP_CWORD )) && __lfsync_cword=$(( ${#__lfsync_words[@]} - 1 ))
    done
    return 0
}

# Offers the words of $2 that start with $1.
__lfsync_reply() {
    __lfsync_text=$1
    local word
    local -a words
    read -ra words <<< "$2"
    for word in "${words[@]}"; do
        [[ $word == "$1"* ]] && COMPREPLY+=("$word")
    done
    return 0
}

__lfsync_commands() {
    __lfsync_reply "$1" 'init id peers trust untrust serve sync push watch pull status whereis offload versions restore scan verify completions help version'
}

# Peer names, one per line from `lfsync __complete peers`; nothing if it fails.
# Asks the program being completed, which need not be on PATH.
__lfsync_peers() {
    __lfsync_text=$1
    local program=${__lfsync_words[0]} output peer
    [[ $program == "~/"* ]] && program=$HOME/${program#"~/"}
    output=$("$program" __complete peers 2>/dev/null) || return 0
    while IFS= read -r peer; do
        [[ -n $peer && $peer == "$1"* ]] || continue
        printf -v peer '%q' "$peer"
        COMPREPLY+=("$peer")
    done <<< "$output"
    return 0
}

# Files, or directories with -d: bash-completion's _filedir when it is loaded
# (it handles ~ and quoting), plain compgen otherwise.
__lfsync_files() {
    __lfsync_text=$1
    compopt -o filenames 2>/dev/null
    if declare -F _filedir >/dev/null; then
        local cur=$1
        _filedir ${2:+"$2"}
    else
        mapfile -t COMPREPLY < <(compgen "${2:--f}" -- "$1")
    fi
    return 0
}

# Counts the arguments before the word being completed; $1 lists the options
# that take a value (the word after one is its value, not an argument).
# Sets __lfsync_count, and __lfsync_only_arguments once `--` was seen.
__lfsync_count_arguments() {
    local i word
    __lfsync_count=0 __lfsync_only_arguments=0
    for (( i = 2; i < __lfsync_cword; i++ )); do
        word=${__lfsync_words[i]}
        if (( __lfsync_only_arguments )) || [[ $word == - || $word != -* ]]; then
            __lfsync_count=$(( __lfsync_count + 1 ))
        elif [[ $word == -- ]]; then
            __lfsync_only_arguments=1
        elif [[ " $1 " == *" $word "* ]]; then
            i=$(( i + 1 ))
        fi
    done
    return 0
}

# Bash replaces only what follows the last '=' or ':' of the word (when those
# are in COMP_WORDBREAKS), so replies must not repeat what comes before it.
__lfsync_trim() {
    local breaks=${COMP_WORDBREAKS//[!=:]/} prefix i
    [[ -n $breaks && -n $__lfsync_text ]] || return 0
    prefix=${__lfsync_text%"${__lfsync_text##*["$breaks"]}"}
    [[ -n $prefix ]] || return 0
    for i in "${!COMPREPLY[@]}"; do
        COMPREPLY[i]=${COMPREPLY[i]#"$prefix"}
    done
    return 0
}

_lfsync_init() {
    local cur=$1 prev=${__lfsync_words[__lfsync_cword-1]} option value
    if [[ $cur == --*=* ]]; then
        option=${cur%%=*} value=${cur#*=}
    else
        option=$prev value=$cur
    fi
    case $option in
        --name) return 0 ;;
    esac
    __lfsync_reply "$cur" '--name --json -q --quiet -v --verbose -h --help'
}

_lfsync_id() {
    local cur=$1
    __lfsync_reply "$cur" '--json -q --quiet -v --verbose -h --help'
}

_lfsync_peers() {
    local cur=$1 prev=${__lfsync_words[__lfsync_cword-1]} option value
    if [[ $cur == --*=* ]]; then
        option=${cur%%=*} value=${cur#*=}
    else
        option=$prev value=$cur
    fi
    case $option in
        --timeout) return 0 ;;
    esac
    __lfsync_reply "$cur" '--timeout --json -q --quiet -v --verbose -h --help'
}

_lfsync_trust() {
    local cur=$1 prev=${__lfsync_words[__lfsync_cword-1]} option value
    if [[ $cur == --*=* ]]; then
        option=${cur%%=*} value=${cur#*=}
    else
        option=$prev value=$cur
    fi
    case $option in
        --name) return 0 ;;
        --address) return 0 ;;
        --deletions) return 0 ;;
    esac
    __lfsync_count_arguments '--name --address --deletions'
    if (( __lfsync_only_arguments == 0 )) && [[ $cur == -* ]]; then
        __lfsync_reply "$cur" '--name --address --auto-accept --allow-pull --deletions -q --quiet -v --verbose -h --help'
        return 0
    fi
    case $__lfsync_count in
        0) : ;;
        *) __lfsync_reply "$cur" '--name --address --auto-accept --allow-pull --deletions -q --quiet -v --verbose -h --help' ;;
    esac
    return 0
}

_lfsync_untrust() {
    local cur=$1
    __lfsync_count_arguments ''
    if (( __lfsync_only_arguments == 0 )) && [[ $cur == -* ]]; then
        __lfsync_reply "$cur" '-q --quiet -v --verbose -h --help'
        return 0
    fi
    case $__lfsync_count in
        0) __lfsync_peers "$cur" ;;
        *) __lfsync_reply "$cur" '-q --quiet -v --verbose -h --help' ;;
    esac
    return 0
}

_lfsync_serve() {
    local cur=$1 prev=${__lfsync_words[__lfsync_cword-1]} option value
    if [[ $cur == --*=* ]]; then
        option=${cur%%=*} value=${cur#*=}
    else
        option=$prev value=$cur
    fi
    case $option in
        --listen) return 0 ;;
        --chmod) return 0 ;;
        --bwlimit) return 0 ;;
        --exclude) return 0 ;;
        --exclude-from) __lfsync_files "$value"; return 0 ;;
        --library) __lfsync_files "$value" -d; return 0 ;;
    esac
    __lfsync_count_arguments '--listen --chmod --bwlimit --exclude --exclude-from --library'
    if (( __lfsync_only_arguments == 0 )) && [[ $cur == -* ]]; then
        __lfsync_reply "$cur" '--listen --no-advertise --chmod --bwlimit --exclude --exclude-from --no-default-excludes --library -q --quiet -v --verbose -h --help'
        return 0
    fi
    case $__lfsync_count in
        0) __lfsync_files "$cur" -d ;;
        *) __lfsync_reply "$cur" '--listen --no-advertise --chmod --bwlimit --exclude --exclude-from --no-default-excludes --library -q --quiet -v --verbose -h --help' ;;
    esac
    return 0
}

_lfsync_sync() {
    local cur=$1 prev=${__lfsync_words[__lfsync_cword-1]} option value
    if [[ $cur == --*=* ]]; then
        option=${cur%%=*} value=${cur#*=}
    else
        option=$prev value=$cur
    fi
    case $option in
        --with) __lfsync_peers "$value"; return 0 ;;
        --max-delete) return 0 ;;
        --listen) return 0 ;;
        --chmod) return 0 ;;
        --settle) return 0 ;;
        --rescan-interval) return 0 ;;
        --bwlimit) return 0 ;;
        --exclude) return 0 ;;
        --exclude-from) __lfsync_files "$value"; return 0 ;;
    esac
    __lfsync_count_arguments '--with --max-delete --listen --chmod --settle --rescan-interval --bwlimit --exclude --exclude-from'
    if (( __lfsync_only_arguments == 0 )) && [[ $cur == -* ]]; then
        __lfsync_reply "$cur" '--with --all --delete --max-delete --listen --no-advertise --chmod --settle --rescan-interval --bwlimit --json --exclude --exclude-from --no-default-excludes -q --quiet -v --verbose -h --help'
        return 0
    fi
    case $__lfsync_count in
        0) __lfsync_files "$cur" -d ;;
        *) __lfsync_reply "$cur" '--with --all --delete --max-delete --listen --no-advertise --chmod --settle --rescan-interval --bwlimit --json --exclude --exclude-from --no-default-excludes -q --quiet -v --verbose -h --help' ;;
    esac
    return 0
}

_lfsync_push() {
    local cur=$1 prev=${__lfsync_words[__lfsync_cword-1]} option value
    if [[ $cur == --*=* ]]; then
        option=${cur%%=*} value=${cur#*=}
    else
        option=$prev value=$cur
    fi
    case $option in
        --to) __lfsync_peers "$value"; return 0 ;;
        --progress) __lfsync_reply "$value" 'auto plain json none'; return 0 ;;
        --bwlimit) return 0 ;;
        --max-delete) return 0 ;;
        --exclude) return 0 ;;
        --exclude-from) __lfsync_files "$value"; return 0 ;;
    esac
    __lfsync_count_arguments '--to --progress --bwlimit --max-delete --exclude --exclude-from'
    if (( __lfsync_only_arguments == 0 )) && [[ $cur == -* ]]; then
        __lfsync_reply "$cur" '--to --all --batch --dry-run --progress --bwlimit --delete --max-delete --json --exclude --exclude-from --no-default-excludes -q --quiet -v --verbose -h --help'
        return 0
    fi
    case $__lfsync_count in
        *) __lfsync_files "$cur" -d ;;
    esac
    return 0
}

_lfsync_watch() {
    local cur=$1 prev=${__lfsync_words[__lfsync_cword-1]} option value
    if [[ $cur == --*=* ]]; then
        option=${cur%%=*} value=${cur#*=}
    else
        option=$prev value=$cur
    fi
    case $option in
        --to) __lfsync_peers "$value"; return 0 ;;
        --settle) return 0 ;;
        --rescan-interval) return 0 ;;
        --bwlimit) return 0 ;;
        --max-delete) return 0 ;;
        --exclude) return 0 ;;
        --exclude-from) __lfsync_files "$value"; return 0 ;;
    esac
    __lfsync_count_arguments '--to --settle --rescan-interval --bwlimit --max-delete --exclude --exclude-from'
    if (( __lfsync_only_arguments == 0 )) && [[ $cur == -* ]]; then
        __lfsync_reply "$cur" '--to --all --settle --rescan-interval --bwlimit --delete --max-delete --json --exclude --exclude-from --no-default-excludes -q --quiet -v --verbose -h --help'
        return 0
    fi
    case $__lfsync_count in
        *) __lfsync_files "$cur" -d ;;
    esac
    return 0
}

_lfsync_pull() {
    local cur=$1 prev=${__lfsync_words[__lfsync_cword-1]} option value
    if [[ $cur == --*=* ]]; then
        option=${cur%%=*} value=${cur#*=}
    else
        option=$prev value=$cur
    fi
    case $option in
        --from) __lfsync_peers "$value"; return 0 ;;
        --bwlimit) return 0 ;;
        --exclude) return 0 ;;
        --exclude-from) __lfsync_files "$value"; return 0 ;;
        --library) __lfsync_files "$value" -d; return 0 ;;
    esac
    __lfsync_count_arguments '--from --bwlimit --exclude --exclude-from --library'
    if (( __lfsync_only_arguments == 0 )) && [[ $cur == -* ]]; then
        __lfsync_reply "$cur" '--from --batch --dry-run --bwlimit --json --exclude --exclude-from --no-default-excludes --library -q --quiet -v --verbose -h --help'
        return 0
    fi
    case $__lfsync_count in
        0) __lfsync_files "$cur" -d ;;
        *) __lfsync_reply "$cur" '--from --batch --dry-run --bwlimit --json --exclude --exclude-from --no-default-excludes --library -q --quiet -v --verbose -h --help' ;;
    esac
    return 0
}

_lfsync_status() {
    local cur=$1 prev=${__lfsync_words[__lfsync_cword-1]} option value
    if [[ $cur == --*=* ]]; then
        option=${cur%%=*} value=${cur#*=}
    else
        option=$prev value=$cur
    fi
    case $option in
        --peer) __lfsync_peers "$value"; return 0 ;;
    esac
    __lfsync_count_arguments '--peer'
    if (( __lfsync_only_arguments == 0 )) && [[ $cur == -* ]]; then
        __lfsync_reply "$cur" '--peer --json -q --quiet -v --verbose -h --help'
        return 0
    fi
    case $__lfsync_count in
        0) __lfsync_files "$cur" -d ;;
        *) __lfsync_reply "$cur" '--peer --json -q --quiet -v --verbose -h --help' ;;
    esac
    return 0
}

_lfsync_whereis() {
    local cur=$1 prev=${__lfsync_words[__lfsync_cword-1]} option value
    if [[ $cur == --*=* ]]; then
        option=${cur%%=*} value=${cur#*=}
    else
        option=$prev value=$cur
    fi
    case $option in
        --missing-on) __lfsync_peers "$value"; return 0 ;;
    esac
    __lfsync_count_arguments '--missing-on'
    if (( __lfsync_only_arguments == 0 )) && [[ $cur == -* ]]; then
        __lfsync_reply "$cur" '--missing-on --json -q --quiet -v --verbose -h --help'
        return 0
    fi
    case $__lfsync_count in
        *) __lfsync_files "$cur" ;;
    esac
    return 0
}

_lfsync_offload() {
    local cur=$1 prev=${__lfsync_words[__lfsync_cword-1]} option value
    if [[ $cur == --*=* ]]; then
        option=${cur%%=*} value=${cur#*=}
    else
        option=$prev value=$cur
    fi
    case $option in
        --copies) return 0 ;;
        --peers) __lfsync_peers "$value"; return 0 ;;
        --timeout) return 0 ;;
    esac
    __lfsync_count_arguments '--copies --peers --timeout'
    if (( __lfsync_only_arguments == 0 )) && [[ $cur == -* ]]; then
        __lfsync_reply "$cur" '--copies --yes --no-proof --peers --timeout --json -q --quiet -v --verbose -h --help'
        return 0
    fi
    case $__lfsync_count in
        *) __lfsync_files "$cur" ;;
    esac
    return 0
}

_lfsync_versions() {
    local cur=$1
    __lfsync_count_arguments ''
    if (( __lfsync_only_arguments == 0 )) && [[ $cur == -* ]]; then
        __lfsync_reply "$cur" '--json -q --quiet -v --verbose -h --help'
        return 0
    fi
    case $__lfsync_count in
        0) __lfsync_files "$cur" ;;
        *) __lfsync_reply "$cur" '--json -q --quiet -v --verbose -h --help' ;;
    esac
    return 0
}

_lfsync_restore() {
    local cur=$1 prev=${__lfsync_words[__lfsync_cword-1]} option value
    if [[ $cur == --*=* ]]; then
        option=${cur%%=*} value=${cur#*=}
    else
        option=$prev value=$cur
    fi
    case $option in
        --at) return 0 ;;
    esac
    __lfsync_count_arguments '--at'
    if (( __lfsync_only_arguments == 0 )) && [[ $cur == -* ]]; then
        __lfsync_reply "$cur" '--at -q --quiet -v --verbose -h --help'
        return 0
    fi
    case $__lfsync_count in
        0) __lfsync_files "$cur" ;;
        *) __lfsync_reply "$cur" '--at -q --quiet -v --verbose -h --help' ;;
    esac
    return 0
}

_lfsync_scan() {
    local cur=$1 prev=${__lfsync_words[__lfsync_cword-1]} option value
    if [[ $cur == --*=* ]]; then
        option=${cur%%=*} value=${cur#*=}
    else
        option=$prev value=$cur
    fi
    case $option in
        --exclude) return 0 ;;
        --exclude-from) __lfsync_files "$value"; return 0 ;;
    esac
    __lfsync_count_arguments '--exclude --exclude-from'
    if (( __lfsync_only_arguments == 0 )) && [[ $cur == -* ]]; then
        __lfsync_reply "$cur" '--json --no-cache --exclude --exclude-from --no-default-excludes -q --quiet -v --verbose -h --help'
        return 0
    fi
    case $__lfsync_count in
        0) __lfsync_files "$cur" -d ;;
        *) __lfsync_reply "$cur" '--json --no-cache --exclude --exclude-from --no-default-excludes -q --quiet -v --verbose -h --help' ;;
    esac
    return 0
}

_lfsync_verify() {
    local cur=$1 prev=${__lfsync_words[__lfsync_cword-1]} option value
    if [[ $cur == --*=* ]]; then
        option=${cur%%=*} value=${cur#*=}
    else
        option=$prev value=$cur
    fi
    case $option in
        --from) __lfsync_peers "$value"; return 0 ;;
        --library) __lfsync_files "$value" -d; return 0 ;;
    esac
    __lfsync_count_arguments '--from --library'
    if (( __lfsync_only_arguments == 0 )) && [[ $cur == -* ]]; then
        __lfsync_reply "$cur" '--repair --from --clear-damaged --json --library -q --quiet -v --verbose -h --help'
        return 0
    fi
    case $__lfsync_count in
        0) __lfsync_files "$cur" -d ;;
        *) __lfsync_reply "$cur" '--repair --from --clear-damaged --json --library -q --quiet -v --verbose -h --help' ;;
    esac
    return 0
}

_lfsync_completions() {
    local cur=$1
    __lfsync_count_arguments ''
    if (( __lfsync_only_arguments == 0 )) && [[ $cur == -* ]]; then
        __lfsync_reply "$cur" '-q --quiet -v --verbose -h --help'
        return 0
    fi
    case $__lfsync_count in
        0) __lfsync_reply "$cur" 'bash zsh fish' ;;
        *) __lfsync_reply "$cur" '-q --quiet -v --verbose -h --help' ;;
    esac
    return 0
}

_lfsync_help() {
    local cur=$1
    __lfsync_count_arguments ''
    if (( __lfsync_only_arguments == 0 )) && [[ $cur == -* ]]; then
        __lfsync_reply "$cur" '-q --quiet -v --verbose -h --help'
        return 0
    fi
    case $__lfsync_count in
        0) __lfsync_commands "$cur" ;;
        *) __lfsync_reply "$cur" '-q --quiet -v --verbose -h --help' ;;
    esac
    return 0
}

_lfsync_version() {
    local cur=$1
    __lfsync_reply "$cur" '-q --quiet -v --verbose -h --help'
}

_lfsync() {
    local __lfsync_cword __lfsync_text= __lfsync_count __lfsync_only_arguments cur
    local -a __lfsync_words
    COMPREPLY=()
    __lfsync_split
    cur=${__lfsync_words[__lfsync_cword]}
    if (( __lfsync_cword == 1 )); then
        if [[ $cur == -* ]]; then
            __lfsync_reply "$cur" '-h --help --version'
        else
            __lfsync_commands "$cur"
        fi
    else
        case ${__lfsync_words[1]} in
            init) _lfsync_init "$cur" ;;
            id) _lfsync_id "$cur" ;;
            peers) _lfsync_peers "$cur" ;;
            trust) _lfsync_trust "$cur" ;;
            untrust) _lfsync_untrust "$cur" ;;
            serve) _lfsync_serve "$cur" ;;
            sync) _lfsync_sync "$cur" ;;
            push) _lfsync_push "$cur" ;;
            watch) _lfsync_watch "$cur" ;;
            pull) _lfsync_pull "$cur" ;;
            status) _lfsync_status "$cur" ;;
            whereis) _lfsync_whereis "$cur" ;;
            offload) _lfsync_offload "$cur" ;;
            versions) _lfsync_versions "$cur" ;;
            restore) _lfsync_restore "$cur" ;;
            scan) _lfsync_scan "$cur" ;;
            verify) _lfsync_verify "$cur" ;;
            completions) _lfsync_completions "$cur" ;;
            help) _lfsync_help "$cur" ;;
            version) _lfsync_version "$cur" ;;
        esac
    fi
    __lfsync_trim
    return 0
}

complete -F _lfsync lfsync
