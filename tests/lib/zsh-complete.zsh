#!/bin/zsh -f
# zsh-complete.zsh DIR LINE... - the matches that an interactive zsh -f,
# with DIR in its fpath instead of the system's site-functions and
# vendor-completions and compinit run, offers when TAB is pressed after
# each LINE: one output line per LINE, "LINE<TAB>MATCH MATCH...", sorted.  The matches are noted by a compadd wrapper
# (what completion functions add, not what they only ask about with -O,
# -A or -D); a listing prompt never waits for an answer.
zmodload zsh/zpty || exit 2
local dir=$1 line out=${TMPDIR:-/tmp}/zsh-complete.$$ n=0
# run CMD - type CMD and a newline, wait until it has run.
run() {
  local buf= all=
  (( n++ ))
  zpty -w z "$1; print ZC''OK$n"
  while (( SECONDS < 60 )); do
    zpty -r -t z buf 2>/dev/null || { sleep 0.02; continue; }
    all+=$buf
    [[ $all == *ZCOK$n* ]] && return 0
  done
  print -u2 "zsh-complete: no answer to: $1"
  exit 2
}
zpty z zsh -f -i
run "PS1='' PS2='' LISTMAX=100000; unsetopt beep; fpath=(${(q)dir} \${fpath:#*/(site-functions|vendor-completions)})"
run 'autoload -Uz compinit && compinit -u -D'
run "compadd() { if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\\ * ]]; then builtin compadd \"\$@\"; return; fi; local -a _m; builtin compadd -A _m \"\$@\"; print -rl -- \$_m >>${(q)out}; builtin compadd \"\$@\"; }"
run "zstyle ':completion:*' list-prompt ''; zstyle ':completion:*' menu no"
for line in $argv[2,-1]; do
  rm -f $out
  zpty -w -n z "$line"$'\t'
  zpty -w -n z $'\C-e\C-u'
  run ':'
  print -r -- "$line"$'\t'${(j: :)${(ou)${(f)"$(cat $out 2>/dev/null)"}}}
done
zpty -d z
rm -f $out
