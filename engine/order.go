package engine

import (
	"slices"

	"github.com/nextup-dev/nextup"
)

// Less reports whether a comes before b under the fair order policy
// fcfs-priority/v1 (nextup.OrderFCFSPriority): priority entries first, then
// whoever joined earlier, then the smaller sequence number. Seq is assigned
// by the store and is unique, so the order is total and two lists sorted by
// different processes agree on every position shown to a customer.
func Less(a, b nextup.Entry) bool { return nextup.CompareFair(a, b) < 0 }

// SortFair sorts entries in fair order (see Less). It is for lists built in
// memory; the store returns candidates already in this order from an index.
func SortFair(entries []nextup.Entry) { slices.SortStableFunc(entries, nextup.CompareFair) }
