module github.com/nextup-dev/nextup

go 1.26.8
