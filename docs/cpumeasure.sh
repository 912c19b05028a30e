#!/bin/bash
# cpumeasure.sh SECONDS PID... : average CPU % (of one core) of each pid over the interval, from /proc/PID/stat utime+stime
secs=$1; shift
tick=$(getconf CLK_TCK)
declare -A before
for p in "$@"; do before[$p]=$(awk '{print $14+$15}' /proc/$p/stat); done
sleep "$secs"
for p in "$@"; do
  after=$(awk '{print $14+$15}' /proc/$p/stat)
  echo "$(cat /proc/$p/comm) $(echo "scale=2; ($after-${before[$p]})*100/$tick/$secs" | bc)%"
done
