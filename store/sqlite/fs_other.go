//go:build !unix

package sqlite

import "os"

func freeSpace(dir string) (uint64, bool) { return 0, false }

// heldByOther cannot tell here: nothing is taken to hold the file.
func heldByOther(path string) (bool, int, error) { return false, 0, nil }

func dirWritable(dir string) bool { return true }

func sameOwner(like os.FileInfo, path string) error { return nil }
