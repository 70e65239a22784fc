// Command nextup runs the nextup waitlist manager: `nextup help` lists
// its commands. The commands live in package cli, so that another build
// (aws/cmd/nextup-aws) can run them with more adapters registered.
package main

import "github.com/nextup-dev/nextup/cmd/nextup/cli"

func main() { cli.Main() }
