//go:build !linux

package boltstore

// ReleaseMemory does nothing where the process's mappings cannot be read.
func (s *Store) ReleaseMemory() error { return nil }
