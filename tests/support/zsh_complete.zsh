# zsh -f zsh_complete.zsh FPATH_DIR 'command line'
# Prints, one a line, the matches zsh's completion system offers at the end of the line,
# with the completion functions of FPATH_DIR first in fpath. zsh completes only inside
# its line editor, so an interactive zsh (no rc files, no dump file) runs in a
# pseudo-terminal; compadd is wrapped to print each match it adds, and the shell exits
# once the completion is done.
zmodload zsh/zpty || exit 2
zpty z zsh -f -i
zpty -w z "PS1= RPROMPT=; fpath=(${(q)1} \$fpath); autoload -U compinit; compinit -u -D"
# The markers are split in the code typed, so the terminal's echo of it holds neither.
# A compadd that only collects (-O, -A, -D: _arguments and _describe sorting candidates)
# adds nothing the user sees, so it prints nothing.
zpty -w z 'compadd() { if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi; local -a hits; builtin compadd -A hits "$@"; local h; for h in $hits; do print -r -- "SP""MATCH:$h"; done; builtin compadd "$@"; }'
zpty -w z 'comppostfuncs=(sp_done); sp_done() { print -r -- "SP""DONE"; exit }'
zpty -w z 'bindkey "^I" complete-word'
zpty -w -n z "$2"$'\t'

local line out
integer deadline=$(( SECONDS + 30 ))
while (( SECONDS < deadline )); do
  if zpty -r -t z line 2>/dev/null; then
    out+=$line
    [[ $out == *SPDONE* ]] && break
  else
    sleep 0.02
  fi
done
zpty -d z
[[ $out == *SPDONE* ]] || { print -u2 "zsh_complete: no answer from zsh in 30 s"; exit 1 }
# The first match shares its line with the echo of the line typed.
for line in ${(f)out//$'\r'/}; do
  [[ $line == *SPMATCH:* ]] && print -r -- ${line##*SPMATCH:}
done
exit 0
