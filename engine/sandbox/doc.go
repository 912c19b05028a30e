// Package sandbox holds Sandtray's domain types: what a sandbox is, how it was
// created, what ran in it, the labels that mark it as ours, the error kinds the
// engine classifies failures with, and the resource-stat formulas. It imports
// only the standard library so that every other package (the engine, the MCP
// server, the GUI) can share it without pulling in an SDK.
package sandbox
