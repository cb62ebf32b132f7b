#!/bin/sh
# usage: run.sh TAG PLATFORM HOSTS COUNT ALGOS [env...]
tag=$1 plat=$2 hosts=$3 count=$4 algos=$5; shift 5
cd /work/wt-bcastsel
env "$@" nice -n 19 /usr/bin/time -f "@@ %e %U %S %M" tools/convoy-smpirun -platform sim/platforms/$plat.xml -hostfile $hosts \
  build-sim/bin/convoy-bench --dist regular --reps 1 --min-reps 1 --warmup 1 --progress 0 --shared-buffers \
  --algo $algos --coll bcast --count bcast=$count --csv /tmp/bcs/$tag.csv > /tmp/bcs/$tag.log 2>&1
echo done $tag $?
