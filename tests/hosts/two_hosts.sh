#!/usr/bin/env bash
# Two "hosts" on one machine: each rank in a network namespace of its own, joined by a veth
# pair (10.77.0.1 <-> 10.77.0.2), so the run crosses a real link — not loopback — as it
# would between two machines. Trains over TRANSPORT until rank 0 has done a few steps, then
# cuts the link and waits for both ranks to stop on their own.
#   two_hosts.sh BATON TRANSPORT WORKDIR
# Prints "two-hosts: ..." lines for the test to read; exits 77 (with the reason) when the
# machine does not allow network namespaces (not root, no CAP_NET_ADMIN, no iproute2).
set -u
baton=$1 transport=$2 work=$3
name=b$$                                    # short: interface names have 15 characters
ns_a=${name}a ns_b=${name}b
rm -rf "$work" && mkdir -p "$work"

if ! command -v ip > /dev/null; then
  echo "two-hosts: skip: iproute2 (ip) is not installed"
  exit 77
fi
if ! ip netns add "$ns_a" 2> "$work/netns.err"; then
  echo "two-hosts: skip: cannot create a network namespace here: $(cat "$work/netns.err")"
  exit 77
fi
cleanup() {
  kill -9 $(ip netns pids "$ns_a" 2> /dev/null) $(ip netns pids "$ns_b" 2> /dev/null) 2> /dev/null
  ip netns del "$ns_a" 2> /dev/null
  ip netns del "$ns_b" 2> /dev/null
}
trap cleanup EXIT
ip netns add "$ns_b"
ip link add "v$ns_a" type veth peer name "v$ns_b"
ip link set "v$ns_a" netns "$ns_a"
ip link set "v$ns_b" netns "$ns_b"
ip -n "$ns_a" addr add 10.77.0.1/24 dev "v$ns_a"
ip -n "$ns_b" addr add 10.77.0.2/24 dev "v$ns_b"
for ns in "$ns_a" "$ns_b"; do
  ip -n "$ns" link set lo up
  ip -n "$ns" link set "v$ns" up
done
# Nothing listens on port 9 of the other side: "refused" proves the packets got there.
if ! ip netns exec "$ns_b" timeout 5 bash -c 'exec 3<> /dev/tcp/10.77.0.1/9' 2>&1 |
  grep -q refused; then
  echo "two-hosts: skip: the veth pair between the namespaces does not carry traffic"
  exit 77
fi

# A small model and a long run: the link is cut while it trains.
settings=(--set model.name=mlp --set model.params.in_features=16 --set model.params.hidden=32
  --set model.params.layers=4 --set model.params.out_features=4 --set data.source=synthetic
  --set data.batch_size=16 --set schedule.name=1f1b --set schedule.microbatches=4
  --set run.steps=100000 --set checkpoint.enabled=false --set trace.enabled=false
  --set world.timeout_s=5 --set world.heartbeat_s=2 --set transport.name="$transport"
  --set world.address=10.77.0.1 --set run.output_dir="$work/runs")
start_rank() {  # rank namespace own-address device
  local rank=$1 ns=$2 own=$3 device=$4
  local extra=()
  if [ "$transport" = gloo ]; then extra=(--set transport.params.address="$own"); fi
  if [ "$transport" = ucx ]; then extra=(--set transport.params.net_devices="$device"); fi
  ip netns exec "$ns" env RANK="$rank" WORLD_SIZE=2 MASTER_ADDR=10.77.0.1 MASTER_PORT=29631 \
    BATON_STORE_TOKEN=two-hosts-test timeout -k 5 120 "$baton" run "${settings[@]}" "${extra[@]}" \
    > "$work/rank$rank.log" 2>&1 &
  started_pid=$!
}
start_rank 0 "$ns_a" 10.77.0.1 "v$ns_a"
pid0=$started_pid
start_rank 1 "$ns_b" 10.77.0.2 "v$ns_b"
pid1=$started_pid

# Wait for a few steps on rank 0 (at most 60 s), proof that it trains across the link.
for _ in $(seq 600); do
  if grep -q "step 5/" "$work/rank0.log" 2> /dev/null; then break; fi
  if ! kill -0 "$pid0" 2> /dev/null || ! kill -0 "$pid1" 2> /dev/null; then break; fi
  sleep 0.1
done
if ! grep -q "step 5/" "$work/rank0.log"; then
  echo "two-hosts: did not train across the link"
  echo "--- rank 0"; cat "$work/rank0.log"; echo "--- rank 1"; cat "$work/rank1.log"
  exit 1
fi
echo "two-hosts: trained across the link"
ip -n "$ns_a" link set "v$ns_a" down
cut_at=$(date +%s.%N)
echo "two-hosts: link cut"
wait "$pid0"; status0=$?
stop0=$(date +%s.%N)
wait "$pid1"; status1=$?
stop1=$(date +%s.%N)
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
echo "two-hosts: rank 0 exit $status0 after $(seconds "$cut_at" "$stop0") s"
echo "two-hosts: rank 1 exit $status1 after $(seconds "$cut_at" "$stop1") s"
echo "--- rank 0"; tail -n 30 "$work/rank0.log"
echo "--- rank 1"; tail -n 30 "$work/rank1.log"
