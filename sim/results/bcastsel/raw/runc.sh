#!/bin/sh
# usage: runc.sh TAG PLATFORM HOSTS COLL COUNT ALGOS [env...]
tag=$1 plat=$2 hosts=$3 coll=$4 count=$5 algos=$6; shift 6
cd /work/wt-bcastsel
env "$@" nice -n 19 tools/convoy-smpirun -platform sim/platforms/$plat.xml -hostfile $hosts \
  build-sim/bin/convoy-bench --dist regular --reps 1 --min-reps 1 --warmup 1 --progress 0 --shared-buffers \
  --algo $algos --coll $coll --count $count --csv /tmp/bcs/$tag.csv > /tmp/bcs/$tag.log 2>&1
grep "^  -" /tmp/bcs/$tag.log
