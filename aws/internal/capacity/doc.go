// Package capacity holds a test, no code: it keeps the cost model's
// DynamoDB figures (the cost package's UseCases, which `nextup cost`
// prices) from drifting from the store. It measures each use case's
// consumed capacity the way aws/store/dynamo's TestCapacity does (the
// store's Measure, adding up what every call reports with
// ReturnConsumedCapacity, on dynoxide, which counts index writes as
// DynamoDB does), and checks that:
//
//   - the four use cases of the table in aws/store/dynamo/doc.go, measured
//     in the very steps of TestCapacity, match both that table and the cost
//     package's figures;
//   - the use cases the cost model adds (a decline, a send, a page view, a
//     single timer of each kind, an idle sweep), measured one at a time,
//     match the cost package's figures.
//
// "Match" is within a tenth (at least one unit, and one call): item sizes
// move with their ids and timestamps by a few bytes, which can tip an item
// over a kilobyte boundary. A change to the store that moves a figure
// further fails here; the cost package's figure, and the doc's table for
// its four, are then updated to what is printed.
package capacity
