# bash completion for sitepatch(1); installed as share/bash-completion/completions/sitepatch.
# Commands, each command's options, and the values of options that take a fixed set.
# tests/e2e/install_test.cpp runs it against what `sitepatch COMMAND --help` prints:
# a command or option added there and not here fails it.

_sitepatch_commands="plan apply reapply sync list status verify rollback adopt refresh wheel edit capture log show audit try rules explain help"
# The options every command takes (before or after the command name).
_sitepatch_global_options="-h --help --version --venv --host --ssh-command --state-dir --json
  --no-pager --color --colour --lock-timeout -v --verbose -q --quiet"
# The global options that take a value, so the value is not read as the command.
_sitepatch_global_valued="--venv --host --ssh-command --state-dir --color --colour --lock-timeout"

# The options of one command ($1).
_sitepatch_command_options() {
  case $1 in
    apply) echo "-n --dry-run --force --system --check --check-with" ;;
    reapply) echo "--all -n --dry-run --force --system --check --check-with" ;;
    sync) echo "--check -n --dry-run --keep-others --force" ;;
    rollback) echo "--all -n --dry-run --missing-ok" ;;
    adopt) echo "-n --dry-run" ;;
    refresh) echo "-o --output -n --dry-run" ;;
    wheel) echo "--from --download -o --output-dir --version --python -n --dry-run --check" ;;
    edit) echo "--copy -n --dry-run" ;;
    capture) echo "--id -o --output --original --from --hash-all --whole-file --system -n --dry-run" ;;
    log) echo "-p --patch -n --max-count" ;;
    show) echo "--recipe" ;;
    audit) echo "--depth --package --module --all --path --rules --no-default-rules --suggest
      --min-severity --category --rule --summary --fail-on --strict --callgraph --ignore --format" ;;
    rules) echo "--rules --no-default-rules --calibrate" ;;
    explain) echo "--list-hints --recipe --hints --rules --run --max-runs --jobs -j --cold --oversubscribe" ;;
  esac
}

# What the environment on the command line holds ($1: ids or dists), one per line: the
# binary typed is asked (`__complete`), with the --venv, --host, --ssh-command and
# --state-dir typed so far; nothing when it cannot say.
_sitepatch_ask() {
  local i word next args=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=${COMP_WORDS[i]}
    next=${COMP_WORDS[i + 1]}
    [[ $next == = ]] && next=${COMP_WORDS[i + 2]}
    case $word in
      --venv | --host | --ssh-command | --state-dir) args+=("$word" "$(eval printf '%s' "$next" 2>/dev/null)") ;;
    esac
  done
  "${COMP_WORDS[0]}" "${args[@]}" __complete "$1" 2>/dev/null
}

_sitepatch_files() {
  compopt -o filenames 2>/dev/null
  mapfile -t COMPREPLY < <(compgen -f -- "$1")
}

_sitepatch_dirs() {
  compopt -o filenames 2>/dev/null
  mapfile -t COMPREPLY < <(compgen -d -- "$1")
}

_sitepatch() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
  COMPREPLY=()
  # bash splits `--color=al` at the `=` (COMP_WORDBREAKS): the option is two words back.
  if [[ $cur == = ]]; then
    cur=""
  elif [[ $prev == = ]] && ((COMP_CWORD >= 2)); then
    prev=${COMP_WORDS[COMP_CWORD - 2]}
  fi

  # The command: the first word that is neither an option nor a global option's value.
  local i word command=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=${COMP_WORDS[i]}
    if [[ ${COMP_WORDS[i + 1]} == = ]]; then
      ((i += 2))
    elif [[ " $_sitepatch_global_valued " == *" $word "* ]]; then
      ((i++))
    elif [[ $word != -* ]]; then
      command=$word
      break
    fi
  done

  # The value of the option before the cursor.
  case $prev in
    --color | --colour)
      mapfile -t COMPREPLY < <(compgen -W "auto always never" -- "$cur")
      return ;;
    --fail-on | --min-severity)
      mapfile -t COMPREPLY < <(compgen -W "error warning info" -- "$cur")
      return ;;
    --format)
      mapfile -t COMPREPLY < <(compgen -W "text json sarif" -- "$cur")
      return ;;
    --recipe)
      # explain's --recipe names the file to write; show's is a flag.
      [[ $command == show ]] || { _sitepatch_files "$cur"; return; } ;;
    --output-dir)
      _sitepatch_dirs "$cur"
      return ;;
    --python)
      mapfile -t COMPREPLY < <(compgen -c -- "$cur")
      return ;;
    --download | --version)
      return ;;
    --from)
      # wheel's --from is a wheel file; capture's a folder edit --copy made.
      if [[ $command == wheel ]]; then _sitepatch_files "$cur"; else _sitepatch_dirs "$cur"; fi
      return ;;
    --venv | --rules | --ignore | --hints | -o | --output)
      _sitepatch_files "$cur"
      return ;;
    --state-dir | --path)
      _sitepatch_dirs "$cur"
      return ;;
    --host)
      mapfile -t COMPREPLY < <(compgen -A hostname -- "$cur")
      return ;;
    --package)
      mapfile -t COMPREPLY < <(compgen -W "$(_sitepatch_ask dists)" -- "$cur")
      return ;;
    --ssh-command | --lock-timeout | --depth | --module | --category | --rule)
      return ;;
  esac

  if [[ $cur == -* ]]; then
    local options="$_sitepatch_global_options $(_sitepatch_command_options "$command")"
    mapfile -t COMPREPLY < <(compgen -W "$options" -- "$cur")
  elif [[ -z $command ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$_sitepatch_commands" -- "$cur")
  elif [[ $command == help ]]; then
    # `help COMMAND`: one command name, right after it.
    ((i == COMP_CWORD - 1)) && mapfile -t COMPREPLY < <(compgen -W "$_sitepatch_commands" -- "$cur")
  else
    # Recipes and logs are files; patch ids and distribution names are the environment's.
    case $command in
      plan | apply | try | explain | sync | wheel) _sitepatch_files "$cur" ;;
      reapply | rollback | show | adopt | verify | refresh)
        mapfile -t COMPREPLY < <(compgen -W "$(_sitepatch_ask ids)" -- "$cur") ;;
      edit | capture)
        mapfile -t COMPREPLY < <(compgen -W "$(_sitepatch_ask dists)" -- "$cur") ;;
    esac
  fi
}

complete -F _sitepatch sitepatch
