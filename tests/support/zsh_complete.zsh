# zsh -f zsh_complete.zsh FPATH_DIR 'command line'...
# Prints, for each command line in turn, the matches zsh's completion system offers at
# its end, one a line, then a line `SPEND`; with the completion functions of FPATH_DIR
# first in fpath. zsh completes only inside its line editor, so an interactive zsh (no
# rc files, no dump file) runs in a pseudo-terminal; compadd is wrapped to print each
# match it adds. One shell completes every line (compinit is most of a start's 0.4 s):
# after each completion the line is killed before the next is typed.
zmodload zsh/zpty || exit 2
zpty z zsh -f -i
zpty -w z "PS1= RPROMPT=; fpath=(${(q)1} \$fpath); autoload -U compinit; compinit -u -D"
# The markers are split in the code typed, so the terminal's echo of it holds neither.
# A compadd that only collects (-O, -A, -D: _arguments and _describe sorting candidates)
# adds nothing the user sees, so it prints nothing.
zpty -w z 'compadd() { if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi; local -a hits; builtin compadd -A hits "$@"; local h; for h in $hits; do print -r -- "SP""MATCH:$h"; done; builtin compadd "$@"; }'
zpty -w z 'sp_done() { print -r -- "SP""DONE" }'
# No listing: a long one would ask "do you wish to see all N possibilities?" and take
# the next line's first key as the answer.
zpty -w z 'bindkey "^I" complete-word; bindkey "^U" kill-whole-line; unsetopt autolist listambiguous beep'
shift

local typed line out
for typed in "$@"; do
  # ^U: whatever the last completion left on the line goes; the completion system
  # empties comppostfuncs after each use.
  zpty -w z $'\C-u''comppostfuncs=(sp_done)'
  zpty -w -n z "$typed"$'\t'
  out=
  integer deadline=$(( SECONDS + 30 ))
  while (( SECONDS < deadline )); do
    if zpty -r -t z line 2>/dev/null; then
      out+=$line
      [[ $out == *SPDONE* ]] && break
    else
      sleep 0.02
    fi
  done
  [[ $out == *SPDONE* ]] || { zpty -d z; print -u2 "zsh_complete: no answer from zsh in 30 s for: $typed"; exit 1 }
  # The first match shares its line with the echo of the line typed.
  for line in ${(f)${out%%SPDONE*}//$'\r'/}; do
    [[ $line == *SPMATCH:* ]] && print -r -- ${line##*SPMATCH:}
  done
  print -r -- SPEND
done
zpty -d z
exit 0
