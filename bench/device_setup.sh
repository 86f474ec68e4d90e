# Sourced by the device scripts (bench/device_*.sh), from the repository
# root on the GPU machine: device_setup NAME makes $out = $OUT/NAME,
# unpacks .devpack.tgz (bench/make_devpack.sh) when carried (replacing a
# warm machine's .devbin),
# puts .devlibs on LD_LIBRARY_PATH, sets $b to the binaries
# (TFMM_DEVICE_BUILD, default .devbin) and writes and shows
# $out/device.txt (date, GPU, driver, clock, cores).
device_setup() {
  out=${OUT:-/tmp/tilefmm-out}/$1
  mkdir -p "$out"
  # A warm machine keeps the last call's .devbin: the pack carried now wins.
  if [ -f .devpack.tgz ]; then
    rm -rf .devbin .devlibs
    tar -xf .devpack.tgz # gzip or xz: GNU tar tells them apart
  fi
  export LD_LIBRARY_PATH=$PWD/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  b=$PWD/${TFMM_DEVICE_BUILD:-.devbin}
  {
    date -u +"date: %Y-%m-%dT%H:%M:%SZ"
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv
    nproc | sed 's/^/cpu cores: /'
  } >"$out/device.txt" 2>&1
  cat "$out/device.txt"
}

# device_suite NAME LIMIT COMMAND...: runs COMMAND under a time limit with
# its output in $out/NAME.log, and appends its exit status, seconds and
# Criterion's synthesis line to $sum.
device_suite() {
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  printf '%-22s rc=%d %4ds %s\n' "$name" "$rc" $((SECONDS - t0)) \
    "$(grep -a Synthesis "$out/$name.log" | tail -1)" >>"$sum"
}
