#!/usr/bin/env bash
# docker cgpu upgrade on a whole node in the test VM (test/suites/75-vm-upgrade.sh runs
# it through test/vm/run.sh), as root from the repository root, with what the host built:
# the tools, and the module variants of test/upgrade/variants.sh in $1. install.sh sets the
# node up (DKMS given the module built on the host: 70-vm-stack has the DKMS build);
# every update loads a variant with --ko.
#   cold: two containers holding memory, settings changed with docker cgpu set; the
#         upgrade stops them, replaces the module, starts them, gives every value back;
#         no --yes without a terminal refuses; a module that fails to load: the old one
#         is back, the containers run again with the same values.
#   hot:  processes keep allocating and launching in both containers through the update;
#         afterwards every meminfo line is a live process's exact holding, the limits
#         refuse where the budgets say; a module of another state format is refused with
#         the node unchanged; a module that fails to load: the old one comes back with
#         the state and every process's charges.
set -uo pipefail
source test/stack/lib.sh
V=$1
T0=$(date +%s)
section() { echo "--- $* ($(($(date +%s) - T0))s)"; }
W=$(mktemp -d /tmp/upgrade.XXXXXX)
VER=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' kmod/dkms.conf)
NEXT=$(modinfo -F version "$V/next/cgpu_km.ko")
GIB=$((1 << 30)) CHUNK=$((64 << 20))
ONE=1056195652 SIX=6337173913 SEVEN=7393369565 # 1, 6, 7 of 15 GiB of a 15109 MiB T4
RUN=(cgpu run -d -t --label cgpu.test=on)
MiB=$((1 << 20))

# settings: the node's values an update must keep, and each test container's instance.
settings() {
	local c id
	echo "default_memsize $(cat $P/default_memsize)"
	for f in max_inst policy prio_ratio free_weight; do echo "$f $(cat $P/0/$f)"; done
	for c in gpu_test1 gpu_test2; do
		id=$(id_of $c)
		echo "$c $(cat $P/0/$id/memsize 2>&1) $(cat $P/0/$id/weight 2>&1) $(cat $P/0/$id/highprio 2>&1)"
	done
}
running() { docker ps --filter label=cgpu.test=on --format '{{.Names}}' | sort | tr '\n' ' '; }
upgrade() { docker cgpu upgrade "$@" >"$W/out" 2>&1; }
show() { sed 's/^/  | /' "$W/out"; }
# update WHAT STATUS ARGS...: docker cgpu upgrade ARGS, its output shown, its exit status
# and how long it took.
update() {
	local what=$1 want=$2 s=$(date +%s) rc
	shift 2
	upgrade "$@"
	rc=$?
	show
	eq "$what ($(($(date +%s) - s))s)" "$rc" "$want"
}

# holding CONTAINER BYTES: a process in CONTAINER that allocates BYTES and keeps them.
holding() {
	local id before i
	id=$(id_of "$1")
	before=$(grep -c '^PID:' "$P/0/$id/meminfo")
	docker exec -d "$1" cudaprobe alloc "$2" -k
	for i in $(seq 1 120); do
		[ "$(grep -c '^PID:' "$P/0/$id/meminfo")" -gt "$before" ] && return
		sleep 0.5
	done
	bad "$1: no process came to hold $2 bytes"
}

# nspid HOSTPID: the process's PID in its container.
nspid() { awk '/^NSpid:/ { print $NF }' "/proc/$1/status" 2>/dev/null; }

# ledger_matches CONTAINER: every PID line of the container's meminfo is a live process
# of it holding exactly what the process says it holds ($W/held.CONTAINER: "NSPID BYTES"
# lines), and Free is memsize less their sum.
ledger_matches() {
	local c=$1 id pid mem sum=0 n=0 want
	id=$(id_of "$c")
	while read -r _ pid _ mem; do
		want=$(awk -v p="$(nspid "$pid")" '$1 == p { print $2 }' "$W/held.$c")
		eq "$c: meminfo PID $pid (pid $(nspid "$pid") inside) holds what it says" "$mem" "${want:-no such process}"
		sum=$((sum + mem)) n=$((n + 1))
	done < <(grep '^PID:' "$P/0/$id/meminfo")
	eq "$c: processes in meminfo" "$n" "$(wc -l <"$W/held.$c")"
	eq "$c: Free is memsize less the live charges" "$(meminfo_free "$c")" "$(($(memsize "$c") - sum))"
}

# limit CONTAINER: one more process allocates 64 MiB at a time up to the budget left.
limit() {
	local c=$1 used loop
	used=$(($(memsize "$c") - $(meminfo_free "$c")))
	loop=$(docker exec "$c" cudaprobe alloc-loop -c 64 2>&1)
	eq "$c: allocated until the budget is used up" "$(val allocated "$loop")" \
		$((($(memsize "$c") - used) / CHUNK * CHUNK))
	eq "$c: then refused" "$(val stop "$loop")" CUDA_ERROR_OUT_OF_MEMORY
}

echo "upgrade suite: kernel $KVER, $(nproc) vCPUs, cgpu_km $VER, variants: $(cd "$V" && for d in */; do printf '%s%s ' "$d" "$(modinfo -F version "$d/cgpu_km.ko")"; done)"
section "a node with cgpu (install.sh, DKMS given the host's build) and two containers"
prep_node || exit 1
s=$(date +%s)
./install.sh --prebuilt --built kmod/cgpu_km.ko --sim-gpus 1 --restart-docker >"$W/out" 2>&1 || { show; bad "install.sh"; summary upgrade; exit 1; }
ok "install.sh ($(($(date +%s) - s))s)"
build_image libcgpu/build/sched-load && ok "image $IMAGE built" || { bad "image build"; summary upgrade; exit 1; }
docker "${RUN[@]}" --name gpu_test1 -e ALIYUN_COM_GPU_MEM_CONTAINER=6 -e ALIYUN_COM_GPU_MEM_DEV=15 $IMAGE >/dev/null
docker "${RUN[@]}" --name gpu_test2 -e ALIYUN_COM_GPU_MEM_CONTAINER=8 -e ALIYUN_COM_GPU_MEM_DEV=15 $IMAGE >/dev/null
holding gpu_test1 $GIB
holding gpu_test2 $((2 * GIB))
docker cgpu set --gpu 0 --policy 2 --max-inst 8 --prio-ratio 40 >/dev/null &&
	docker cgpu set --default-memsize 1 >/dev/null &&
	docker cgpu set gpu_test1 --weight 3 --high-prio >/dev/null &&
	docker cgpu set gpu_test2 --memsize 7 >/dev/null || bad "docker cgpu set"
settings >"$W/settings"
eq "values set" "$(tr '\n' ' ' <"$W/settings")" \
	"default_memsize $ONE max_inst 8 policy 2 prio_ratio 40 free_weight 4 gpu_test1 $SIX 3 1 gpu_test2 $SEVEN 1 0 "
eq "memory in use" "$(meminfo_free gpu_test1) $(meminfo_free gpu_test2)" "$((SIX - GIB)) $((SEVEN - 2 * GIB))"

section "cold: refused without --yes and without a terminal"
upgrade --ko "$V/next/cgpu_km.ko" </dev/null
eq "exit status" "$?" 1
is "says why" grep -q 'no terminal to ask for confirmation on: pass --yes' "$W/out"
is "lists both containers first" sh -c "grep -q '^  gpu_test1 (' $W/out && grep -q '^  gpu_test2 (' $W/out"
eq "module unchanged" "$(cat $P/version)" "$VER"
eq "both still run" "$(running)" "gpu_test1 gpu_test2 "
upgrade --yes --ko /nonexistent/cgpu_km.ko
eq "a module that is not there: exit status" "$?" 1
is "says why, before stopping anything" sh -c "grep -q 'upgrade.sh: --ko /nonexistent/cgpu_km.ko: no such file' $W/out && grep -q 'upgrade.sh --check refused the update' $W/out && ! grep -q 'stopped    ' $W/out"
eq "both still run, never stopped" "$(running)" "gpu_test1 gpu_test2 "

section "cold: docker cgpu upgrade --yes to $NEXT"
update "exit status" 0 --yes --ko "$V/next/cgpu_km.ko"
eq "module" "$(cat $P/version)" "$NEXT"
eq "exactly the two containers run again" "$(running)" "gpu_test1 gpu_test2 "
eq "every value as before, set's included" "$(settings)" "$(cat "$W/settings")"
is "says which were restored" grep -q 'restored   gpu_test1 (.*) on GPU 0: weight 1 -> 3' "$W/out"
agree "after the cold update"
limit gpu_test2

section "cold: a module that fails to load"
update "exit status" 1 --yes --ko "$V/fault/cgpu_km.ko"
is "says what failed" grep -q "FAILED: loading cgpu_km $(modinfo -F version "$V/fault/cgpu_km.ko")" "$W/out"
is "and that upgrade.sh failed" grep -q "upgrade.sh failed (exit status 1).*cgpu_km $NEXT runs now" "$W/out"
eq "the old module is back" "$(cat $P/version)" "$NEXT"
eq "the containers run again" "$(running)" "gpu_test1 gpu_test2 "
eq "every value as before" "$(settings)" "$(cat "$W/settings")"
agree "after the failed cold update"

section "hot: processes allocate and launch in both containers throughout"
: >"$W/held.gpu_test1"
: >"$W/held.gpu_test2"
holding gpu_test1 $GIB
holding gpu_test2 $((2 * GIB))
for x in gpu_test1:a gpu_test1:b gpu_test2:c; do
	docker exec -d "${x%:*}" sh -c "touch /tmp/hold; exec sched-load churn 40 $CHUNK 6 /tmp/hold >/tmp/churn.${x#*:} 2>&1"
done
sleep 8
settings >"$W/settings"
cp "$P/upgrade" "$W/upgrade.before"
update "another state format: refused" 1 --yes --hot --ko "$V/incompatible/cgpu_km.ko"
is "says why" grep -q "reads state formats 6-6, cgpu_km $NEXT writes format 5" "$W/out"
is "upgrade.sh changed nothing" grep -q 'upgrade.sh: nothing was changed' "$W/out"
is "refused by the check, before the freeze" sh -c "grep -q 'upgrade.sh --check refused the update' $W/out && ! grep -q 'frozen ' $W/out"
eq "module unchanged" "$(cat $P/version)" "$NEXT"
eq "upgrade node unchanged" "$(grep -Ev '^(files_|abi_in_use)' $P/upgrade)" "$(grep -Ev '^(files_|abi_in_use)' "$W/upgrade.before")"
eq "settings unchanged" "$(settings)" "$(cat "$W/settings")"
update "hot update to $VER" 0 --yes --hot --ko kmod/cgpu_km.ko
eq "module" "$(cat $P/version)" "$VER"
eq "the upgrade node tells" "$(sed -n 's/^\(update\|last_update\): //p' $P/upgrade | tr '\n' /)" "none/from $NEXT committed/"
is "nothing was stopped" sh -c "! grep -q 'stopped    ' $W/out"
eq "both run" "$(running)" "gpu_test1 gpu_test2 "
eq "every value as before" "$(settings)" "$(cat "$W/settings")"
for i in $(seq 1 120); do
	[ "$(docker exec gpu_test1 sh -c 'cat /tmp/churn.a /tmp/churn.b' | grep -c holding)$(docker exec gpu_test2 grep -c holding /tmp/churn.c)" = 21 ] && break
	sleep 1
done
for x in gpu_test1:a gpu_test1:b gpu_test2:c; do
	o=$(docker exec "${x%:*}" cat "/tmp/churn.${x#*:}")
	echo "  churn ${x#*:} in ${x%:*}: $(grep -E '^(iterations|holding)' <<<"$o" | tr '\n' ' ')"
	eq "churn ${x#*:}: no error, nothing refused, no libcgpu complaint" \
		"$(grep -oE 'refused=[0-9]+ errors=[0-9]+' <<<"$o") $(grep -c '^cgpu:' <<<"$o")" "refused=0 errors=0 0"
	is "churn ${x#*:}: ran through the update" grep -q '^holding pid=' <<<"$o"
	sed -n 's/^holding pid=\([0-9]*\) bytes=\([0-9]*\)$/\1 \2/p' <<<"$o" >>"$W/held.${x%:*}"
	sed -n 's/^iterations=.*max_step_ms=\([0-9.]*\).*/\1/p' <<<"$o" >>"$W/pauses"
done
echo "  longest step of a process during the hot update: $(sort -n "$W/pauses" | tail -1) ms"
for c in gpu_test1 gpu_test2; do
	# cudaprobe's holder: its pid inside, and what it holds.
	docker exec "$c" sh -c 'for p in /proc/[0-9]*; do [ "$(cat $p/comm)" = cudaprobe ] && echo ${p#/proc/}; done' |
		while read -r p; do echo "$p $([ $c = gpu_test1 ] && echo $GIB || echo $((2 * GIB)))"; done >>"$W/held.$c"
	ledger_matches "$c"
done
eq "no reservation left over" "$(sed -n 's/^reservations: //p' $P/upgrade)" 0
limit gpu_test1
limit gpu_test2

section "hot: a module that fails to load"
cp "$P/0/$(id_of gpu_test1)/meminfo" "$W/mi1"
cp "$P/0/$(id_of gpu_test2)/meminfo" "$W/mi2"
update "exit status" 1 --yes --hot --ko "$V/fault/cgpu_km.ko"
is "says what failed" grep -q "FAILED: loading cgpu_km $(modinfo -F version "$V/fault/cgpu_km.ko")" "$W/out"
is "the old module came back with the state" grep -q "undo: load cgpu_km $VER again, with the state" "$W/out"
eq "module" "$(cat $P/version)" "$VER"
eq "the upgrade node tells" "$(sed -n 's/^\(update\|last_update\): //p' $P/upgrade | tr '\n' /)" "none/from $VER committed/"
eq "both run" "$(running)" "gpu_test1 gpu_test2 "
for i in $(seq 1 40); do
	[ "$(sed -n 's/^reservations: //p' $P/upgrade)" = 0 ] && break
	sleep 0.5
done
eq "every process attached again" "$(sed -n 's/^reservations: //p' $P/upgrade)" 0
eq "gpu_test1's ledger as before" "$(cat $P/0/$(id_of gpu_test1)/meminfo)" "$(cat "$W/mi1")"
eq "gpu_test2's ledger as before" "$(cat $P/0/$(id_of gpu_test2)/meminfo)" "$(cat "$W/mi2")"
eq "every value as before" "$(settings)" "$(cat "$W/settings")"
limit gpu_test1
agree "after the failed hot update"

section "done"
docker exec gpu_test1 rm -f /tmp/hold
docker exec gpu_test2 rm -f /tmp/hold
docker rm -f gpu_test1 gpu_test2 >/dev/null
summary upgrade
