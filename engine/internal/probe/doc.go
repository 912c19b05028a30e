// Package probe asks Docker what it is and what it can do, without
// creating anything: the daemon's version and whether it still answers
// (Watch), whether it can give sandboxes NVIDIA GPUs (GPUs, CheckGPUs),
// and, for `sandtray doctor`, which runs outside any engine, the endpoint
// the config leads to (Docker) and the warm pools' spares running now
// (Pool).
package probe
