// Package coldstart measures the Lambda bootstrap (aws/cmd/lambda) the
// way Lambda would see it, without AWS: the binary, unmodified, is
// started under a Lambda Runtime API server of this package's own
// (RuntimeAPI, an httptest server speaking the documented API: GET
// .../invocation/next hands over an event with its request id, deadline
// and function ARN; POST .../response or .../error answers it), on
// DynamoDB served by dynoxide (aws/internal/dynotest).
//
// What is measured:
//
//   - Init duration: from the process's exec to its first GET
//     .../invocation/next, what Lambda reports as Init Duration (the
//     runtime and the function's own init: the store's client, the use
//     cases, the web handler). The first start after a build is not
//     counted (it fills the page cache, as a deployed image's is).
//   - Warm durations of the invocations the cost model needs (cost
//     package, its Inv… figures): a Function URL join, status page, release,
//     claim page and claim, and a timer event with nothing due and with an
//     offer's expiry due; each as Lambda bills it (from the event handed
//     over to the answer) and as CPU time of the function process
//     (/proc/PID/task/*/schedstat), which is what scales on Lambda's
//     smaller CPU share. And a status page after a minute idle: a process
//     idle that long answers its next event tens of milliseconds slower
//     here (cold caches; the Go runtime has handed memory back), which a
//     Lambda environment thawed after a pause shares in part.
//   - The same init for a minimal Python function (handler.py): the same
//     Runtime API loop with urllib, importing boto3 and making a DynamoDB
//     client at init, as the seed's Python 3.14 functions would; and with
//     no boto3 at all, the interpreter alone. The interpreter is the newest
//     found here (python3.14 if there is one; see FindPython), and boto3 is
//     linked from another local interpreter's site-packages when the chosen
//     one lacks it: the report names both.
//
// The figures are this machine's: a full x86-64 core, dynoxide on the
// same machine (a DynamoDB call takes well under a millisecond instead of
// the service's few), no network. A 256 MB function on Lambda gets about
// 256/1769 of a vCPU (1,769 MB is one vCPU, AWS's documentation says), so
// CPU-bound time stretches about sevenfold there; the cost model scales
// the CPU figures so and adds the calls' latency (cost package doc).
//
// `make coldstart` runs the measurement (TestMeasure, off unless
// -coldstart.starts is given; it takes a minute or two, one of them the
// 60-second claim window an expiry waits out) and prints the table. It is
// not part of make test, which runs only TestHarness: two starts, each
// answering one request, to keep the harness itself working.
package coldstart
