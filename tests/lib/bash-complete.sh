#!/bin/bash
# bash-complete.sh DATADIR LINE - what bash-completion offers when TAB is
# pressed at the end of LINE, one reply per line, for a bash whose
# XDG_DATA_DIRS is DATADIR only: the completion is loaded the way
# bash-completion loads it on demand (__load_completion looks in
# DATADIR/bash-completion/completions), and LINE is cut into COMP_WORDS the
# way readline cuts it, at blanks and at runs of COMP_WORDBREAKS characters
# (so "--flags=rdonly,no" is the three words "--flags" "=" "rdonly,no").
# Exit 2 if no completion is found for LINE's command.
BASH_COMPLETION=${BASH_COMPLETION:-/usr/share/bash-completion/bash_completion}
export XDG_DATA_DIRS=$1 BASH_COMPLETION_USER_DIR=/nonexistent
line=$2
# shellcheck source=/dev/null
. "$BASH_COMPLETION" || exit 2
complete -r 2>/dev/null # nothing registered but what the loader finds

COMP_WORDS=()
breaks=${COMP_WORDBREAKS//[[:space:]]/}
word='' kind=''
for ((i = 0; i < ${#line}; i++)); do
	c=${line:i:1}
	if [[ $c == [[:space:]] ]]; then
		[[ -n $word ]] && COMP_WORDS+=("$word")
		word='' kind=''
	elif [[ $breaks == *"$c"* ]]; then
		[[ $kind == w ]] && COMP_WORDS+=("$word") && word=
		word+=$c kind=b
	else
		[[ $kind == b ]] && COMP_WORDS+=("$word") && word=
		word+=$c kind=w
	fi
done
COMP_WORDS+=("$word") # the word being completed, maybe empty
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMP_LINE=$line
COMP_POINT=${#line}
COMP_TYPE=9 COMP_KEY=9

cmd=${COMP_WORDS[0]}
__load_completion "$cmd" || exit 2
func=$(complete -p "$cmd" 2>/dev/null | sed -n 's/.* -F \([^ ]*\) .*/\1/p')
[[ -n $func ]] || exit 2
# Found in DATADIR, not in some other copy bash-completion also searches.
shopt -s extdebug
[[ $(declare -F "$func") == *" $1/"* ]] || { echo "$func is not from $1: $(declare -F "$func")" >&2; exit 2; }
shopt -u extdebug
# readline's word: what follows the last blank or break character.
cur=${COMP_WORDS[COMP_CWORD]}
[[ $kind == b ]] && cur=
"$func" "$cmd" "$cur" "${COMP_WORDS[COMP_CWORD - 1]}"
((${#COMPREPLY[@]})) && printf '%s\n' "${COMPREPLY[@]}"
exit 0
