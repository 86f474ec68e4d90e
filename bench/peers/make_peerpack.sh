#!/usr/bin/env bash
# Packs what bench/peers/run_peers.sh needs on the GPU machine (no network
# there) into .devextra/peers.txz (ignored by git; about 0.2 MB; a few MB with --prebuilt):
#   ecl-bh/ECL-BH_45.cu    ECL-BH v4.5, one CUDA file
#   sph-exa/...            Ryoanji and the cornerstone headers and sources it
#                          builds from (SPH-EXA's ryoanji/src, domain/include,
#                          domain/test/coord_samples/plummer.hpp, licences)
#   VERSIONS               where each came from (repository and commit)
#   our drivers and scripts from bench/peers/ (run_peers.sh, ecl_driver.cu,
#   ryoanji_driver.cu, peers_common.h, ref_accuracy.py, README.md), so that
#   the pack alone runs: tar -xJf peers.txz -C /tmp/pp && bash /tmp/pp/run_peers.sh
#
# The peers' sources come from local git mirrors, never from this repository.
# Get them first with the session's fetch tool (it prints each git directory):
#   fetch github:unibas-dmi-hpc/SPH-EXA     Ryoanji lives in SPH-EXA's ryoanji/,
#                                           on SPH-EXA's domain/ (cornerstone)
#   fetch github:damtharvey/pyblaz          burtscher/ECL-BH is not mirrored; this
#                                           repository's commit 68d76a5 holds
#                                           ECL-BH_45.cu (v4.5: kernels as
#                                           published, its main() prints more;
#                                           our driver does not use that main)
# Usage (from the repository root): bash bench/peers/make_peerpack.sh [--prebuilt]
#   --prebuilt  also builds both drivers here (nvcc, $PEER_ARCH, default
#               sm_90; minutes on few cores) into the pack's bin/, for
#               PEER_PREBUILT=1 bash bench/peers/run_peers.sh (no build on
#               the GPU machine)
# Environment: SPHEXA_GIT, SPHEXA_REV, ECLBH_GIT, ECLBH_REV, ECLBH_PATH
# (defaults below: the commits the harness was checked with), PEERPACK (the
# output, default .devextra/peers.txz of the main checkout).
set -euo pipefail
prebuilt=0
[ "${1:-}" = --prebuilt ] && prebuilt=1
root=$(git rev-parse --show-toplevel)
here=$root/bench/peers
sphexa_git=${SPHEXA_GIT:-/work/.mirror/unibas-dmi-hpc+SPH-EXA/repo}
sphexa_rev=${SPHEXA_REV:-e434947542029b98f0e607adf2f241679eed724c}
eclbh_git=${ECLBH_GIT:-/work/.mirror/damtharvey+pyblaz/repo}
eclbh_rev=${ECLBH_REV:-68d76a53edfaa450b35ebd37467a9552493912da}
eclbh_path=${ECLBH_PATH:-ECL-BH_45.cu}
# the main checkout's .devextra (what the device call carries), also when
# this runs in another worktree of the repository
main_root=$(dirname "$(git rev-parse --path-format=absolute --git-common-dir)")
pack=${PEERPACK:-$main_root/.devextra/peers.txz}

for g in "$sphexa_git" "$eclbh_git"; do
  git --git-dir="$g" rev-parse -q --verify HEAD >/dev/null 2>&1 ||
    { echo "make_peerpack: no git mirror at $g (fetch it first, see the top of this script)" >&2; exit 1; }
done
sphexa_rev=$(git --git-dir="$sphexa_git" rev-parse --verify "$sphexa_rev^{commit}")
eclbh_rev=$(git --git-dir="$eclbh_git" rev-parse --verify "$eclbh_rev^{commit}")

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/ecl-bh" "$stage/sph-exa"
git --git-dir="$eclbh_git" show "$eclbh_rev:$eclbh_path" >"$stage/ecl-bh/ECL-BH_45.cu"
grep -q 'ECL-BH v4.5' "$stage/ecl-bh/ECL-BH_45.cu" ||
  { echo "make_peerpack: $eclbh_path at $eclbh_rev is not ECL-BH v4.5" >&2; exit 1; }
git --git-dir="$sphexa_git" archive "$sphexa_rev" LICENSE ryoanji/src domain/include domain/LICENSE \
  domain/test/coord_samples/plummer.hpp | tar -x -C "$stage/sph-exa"

cp "$here"/run_peers.sh "$here"/ecl_driver.cu "$here"/ryoanji_driver.cu "$here"/peers_common.h \
  "$here"/ref_accuracy.py "$here"/README.md "$stage/"
{
  echo "ECL-BH v4.5: $eclbh_path of github.com/damtharvey/pyblaz at $eclbh_rev (burtscher/ECL-BH not mirrored)"
  echo "Ryoanji + cornerstone: github.com/unibas-dmi-hpc/SPH-EXA at $sphexa_rev ($(git --git-dir="$sphexa_git" log -1 --format=%cs "$sphexa_rev"))"
  echo "drivers: tilefmm bench/peers at $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- bench/peers || echo '+changes')"
} >"$stage/VERSIONS"

if [ $prebuilt = 1 ]; then
  PEER_WORK=$stage.work OUT=$stage.work/out bash "$stage/run_peers.sh" --build-only ||
    { cat "$stage.work/out/peers/build.log" >&2; rm -rf "$stage.work"; exit 1; }
  mkdir -p "$stage/bin"
  cp "$stage.work/build/ecl_driver" "$stage.work/build/ryoanji_driver" "$stage/bin/"
  strip "$stage/bin/ecl_driver" "$stage/bin/ryoanji_driver" 2>/dev/null || true
  echo "${PEER_ARCH:-sm_90}, $(nvcc --version | tail -1), $(date -u '+%Y-%m-%d %H:%M UTC')" >"$stage/bin/BUILT"
  rm -rf "$stage.work"
fi

mkdir -p "$(dirname "$pack")"
tar -C "$stage" -cf - . | xz -T2 -9 >"$pack.tmp"
mv "$pack.tmp" "$pack"
cat "$stage/VERSIONS"
ls -la "$pack"
