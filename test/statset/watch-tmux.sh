#!/usr/bin/env bash
# docker cgpu stat --watch in a real terminal: a tmux pane (its own server, socket name
# $1) runs it; capture-pane reads the screen. Checks: it draws on the alternate screen
# with a memory bar, refreshes in place (one header, the clock moving, a change made
# meanwhile showing up), and Ctrl-C or q ends it with status 0, the shell's screen back,
# the cursor shown and the terminal's modes (icanon, echo) as they were.
# Needs DOCKER_BIN, DOCKER_HOST, DOCKER_CONFIG, CGPU_RUNTIME_CONFIG and CGPU_E2E_IMAGE
# (test/suites/45-stat-set.sh sets them).
set -uo pipefail
sock=${1:?tmux socket name}
fails=0
bad() { echo "FAIL [watch] $*"; fails=$((fails + 1)); }
tm() { tmux -L "$sock" "$@"; }
screen() { tm capture-pane -p -t w; }
# until SECONDS PATTERN: waits for the screen to show PATTERN (grep -E).
until_screen() {
	local i
	for i in $(seq 1 $(($1 * 10))); do
		screen | grep -Eq -- "$2" && return 0
		sleep 0.1
	done
	bad "no /$2/ on the screen after $1 s:"
	screen | sed 's/^/  | /'
	return 1
}
flag() { tm display -p -t w "#{$1}"; }

helper=$(mktemp /tmp/cgpu-modes.XXXXXX)
cat >"$helper" <<'EOT'
echo "modes: $(stty -a | tr ' ;' '\n\n' | grep -xE -- '-?(icanon|echo)' | sort | paste -sd' ')"
EOT
cid=$("$DOCKER_BIN" cgpu run -d --name watched --gpu-mem 2 --gpus device=1 "$CGPU_E2E_IMAGE" sleep 600) || exit 1
trap '"$DOCKER_BIN" rm -f watched >/dev/null; rm -f "$helper"' EXIT
# Half of its memory held, as the kernel's meminfo would say: the bar shows 5 of 10.
root=$(jq -r .procfs_root "$CGPU_RUNTIME_CONFIG")
mem=$(cat "$root/1/${cid:0:12}/memsize")
printf 'Free: %d\nPID: 1 Mem: %d\n' $((mem - mem / 2)) $((mem / 2)) >"$root/1/${cid:0:12}/meminfo"

tm new-session -d -s w -x 150 -y 30 -e "DOCKER_HOST=$DOCKER_HOST" -e "DOCKER_CONFIG=$DOCKER_CONFIG" \
	-e "CGPU_RUNTIME_CONFIG=$CGPU_RUNTIME_CONFIG" -e "PATH=$PATH" -e TERM=xterm-256color bash --norc --noprofile
tm send-keys -t w "PS1='ready\$ '; clear" Enter
until_screen 5 '^ready\$ ?$'
# modes: what the terminal is set to for the next command the shell runs. bash keeps the
# modes a program leaves behind when it exits normally, so a watch that did not put them
# back shows here.
modes() {
	tm send-keys -t w "clear; sh $helper" Enter
	until_screen 5 '^modes: ' >/dev/null && screen | grep '^modes: '
}
modes_before=$(modes)
[ "$modes_before" = "modes: echo icanon" ] || bad "the pane starts with modes '$modes_before'"

watch_round() { # KEYS: how to stop it
	tm send-keys -t w "$DOCKER_BIN cgpu stat --watch --interval 300ms" Enter
	until_screen 10 'docker cgpu stat, every 300ms' || return
	[ "$(flag alternate_on)" = 1 ] || bad "$1: not on the alternate screen"
	[ "$(flag cursor_flag)" = 0 ] || bad "$1: the cursor is shown while watching"
	until_screen 5 "${cid:0:12} +watched +1 +\[#####\.\.\.\.\.\] 50\.00%" || return
	local first second
	first=$(screen | grep -o '[0-9][0-9]:[0-9][0-9]:[0-9][0-9]')
	sleep 1.2
	second=$(screen | grep -o '[0-9][0-9]:[0-9][0-9]:[0-9][0-9]')
	[ -n "$first" ] && [ "$first" != "$second" ] || bad "$1: the clock did not move ($first, $second)"
	[ "$(screen | grep -c 'docker cgpu stat, every')" = 1 ] || bad "$1: more than one frame on the screen"
	"$DOCKER_BIN" cgpu set watched --weight 7 >/dev/null
	until_screen 5 "${cid:0:12} +watched +1 +\[#####\.\.\.\.\.\] 50\.00% +[^ ]+ / [^ ]+ +1 +7 " || return
	"$DOCKER_BIN" cgpu set watched --weight 1 >/dev/null
	tm send-keys -t w "$1"
	until_screen 5 '^ready\$ ?$' || return
	[ "$(flag alternate_on)" = 0 ] || bad "$1: still on the alternate screen"
	[ "$(flag cursor_flag)" = 1 ] || bad "$1: the cursor was not shown again"
	screen | grep -q 'docker cgpu stat, every' && bad "$1: the watch screen was left on the shell's screen"
	tm send-keys -t w 'echo "rc=$?"' Enter
	until_screen 5 '^rc=0$' || bad "$1: exit status not 0"
	[ "$(modes)" = "$modes_before" ] || bad "$1: terminal modes '$(modes)', were '$modes_before'"
	tm send-keys -t w clear Enter
	until_screen 5 '^ready\$ ?$'
}
watch_round C-c
watch_round q

# Not a terminal: frames one after another, no escape sequences.
out=$(timeout -s INT 2 "$DOCKER_BIN" cgpu stat --watch --interval 300ms --format '{{.Name}}' watched)
frames=$(grep -c '^watched$' <<<"$out")
[ "$frames" -ge 3 ] || bad "piped: $frames frames in 2 s"
grep -q $'\x1b' <<<"$out" && bad "piped: escape sequences in the output"

[ "$fails" = 0 ] && echo "watch: passed"
[ "$fails" = 0 ]
