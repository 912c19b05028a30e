package sandbox

// CPUPercent computes CPU use between two cumulative samples the way `docker
// stats` does: the container's share of the host's CPU time, scaled by the
// number of online CPUs, so one busy core reads 100.
func CPUPercent(prevContainer, container, prevSystem, system uint64, onlineCPUs uint32) float64 {
	if container < prevContainer || system <= prevSystem || onlineCPUs == 0 {
		return 0
	}
	cpuDelta := float64(container - prevContainer)
	sysDelta := float64(system - prevSystem)
	return cpuDelta / sysDelta * float64(onlineCPUs) * 100
}

// MemoryUsage subtracts reclaimable page cache from raw usage, as `docker
// stats` does: "inactive_file" on cgroup v1 and v2 alike (v1 calls it
// total_inactive_file).
func MemoryUsage(usage uint64, stats map[string]uint64) uint64 {
	cache, ok := stats["total_inactive_file"]
	if !ok {
		cache = stats["inactive_file"]
	}
	if cache > usage {
		return 0
	}
	return usage - cache
}
