package sqlstore

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

func TestLoadMigrations(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		files   []string
		want    []int
		wantErr bool
	}{
		{name: "in version order", files: []string{"m/0002_b.sql", "m/0010_c.sql", "m/0001_a.sql"}, want: []int{1, 2, 10}},
		{name: "none", want: nil},
		{name: "no number", files: []string{"m/init.sql"}, wantErr: true},
		{name: "zero", files: []string{"m/0000_a.sql"}, wantErr: true},
		{name: "shared number", files: []string{"m/0001_a.sql", "m/01_b.sql"}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fsys := fstest.MapFS{}
			for _, f := range tc.files {
				fsys[f] = &fstest.MapFile{Data: []byte("-- " + f)}
			}
			ms, err := LoadMigrations(fsys, "m")
			if tc.wantErr {
				if err == nil {
					t.Fatalf("LoadMigrations(%v) = %v, want an error", tc.files, ms)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, m := range ms {
				got = append(got, m.Version)
				if m.SQL != "-- m/"+m.Name+".sql" {
					t.Errorf("migration %s holds %q", m.Name, m.SQL)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("versions %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("versions %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// Pending hands out what a database has not seen, in order, and refuses a
// database newer than the files; LatestVersion names the last file.
func TestPending(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{}
	for _, f := range []string{"m/0001_a.sql", "m/0002_b.sql", "m/0004_c.sql"} {
		fsys[f] = &fstest.MapFile{Data: []byte("-- " + f)}
	}
	if got := LatestVersion(fsys, "m"); got != 4 {
		t.Errorf("LatestVersion = %d, want 4", got)
	}
	if got := LatestVersion(fstest.MapFS{}, "m"); got != 0 {
		t.Errorf("LatestVersion of no files = %d, want 0", got)
	}
	for _, tc := range []struct {
		current int
		want    []int
	}{{0, []int{1, 2, 4}}, {1, []int{2, 4}}, {3, []int{4}}, {4, nil}} {
		ms, err := Pending(fsys, "m", tc.current)
		var got []int
		for _, m := range ms {
			got = append(got, m.Version)
		}
		if err != nil || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("Pending at version %d = %v, %v; want %v", tc.current, got, err, tc.want)
		}
	}
	if ms, err := Pending(fsys, "m", 5); err == nil || !strings.Contains(err.Error(), "newer than this build") {
		t.Errorf("Pending at version 5 = %v, %v; want the newer schema refused", ms, err)
	}
}

// Times keep their microseconds and come back in UTC; the zero time and the
// open Latest bound survive the round trip.
func TestTimes(t *testing.T) {
	t.Parallel()
	at := time.Date(2031, 3, 12, 14, 30, 0, 123456789, time.FixedZone("IST", 5*3600+30*60))
	if got, want := FromTS(TS(at)), at.Truncate(time.Microsecond); !got.Equal(want) || got.Location() != time.UTC {
		t.Errorf("round trip of %v: %v", at, got)
	}
	if got := FromTS(TS(time.Time{})); got != (time.Time{}) {
		t.Errorf("zero time round trip: %#v", got)
	}
	if got := FromLatestTS(LatestTS(time.Time{})); !got.IsZero() {
		t.Errorf("open Latest round trip: %v", got)
	}
	if TSPtr(nil) != nil || FromNullTS(nil) != nil {
		t.Error("a missing time is not NULL")
	}
	us := TS(at)
	if got := FromNullTS(&us); got == nil || !got.Equal(at.Truncate(time.Microsecond)) {
		t.Errorf("FromNullTS(%d) = %v", us, got)
	}
}

// row is a Scanner over fixed values.
type row []any

func (r row) Scan(dest ...any) error {
	for i, d := range dest {
		switch p := d.(type) {
		case *string:
			*p = r[i].(string)
		case *int64:
			*p = r[i].(int64)
		}
	}
	return nil
}

// Rules written before reminders existed read back with the default
// reminders; rules that say [] keep none.
func TestScanBusinessReminderDefault(t *testing.T) {
	t.Parallel()
	old := `{"version":3,"claim_window_seconds":600,"order_policy":"fcfs-priority/v1","quiet_hours":null,"time_critical_through_quiet":false,"min_lead_seconds":900,"max_offers_per_person_per_day":3,"max_offers_per_slot":null,"down_fit":false,"position_visibility":"exact"}`
	b, err := ScanBusiness(row{"biz_1", "Salon", "UTC", old, "h", int64(0), "{}"})
	if err != nil || len(b.Rules.ReminderOffsets) != 2 || b.Rules.ReminderOffsets[0] != 24*time.Hour || b.Rules.Version != 3 || b.Rules.QuietHours != nil {
		t.Fatalf("old rules read as %+v, %v", b.Rules, err)
	}
	none := old[:len(old)-1] + `,"reminder_offsets_seconds":[]}`
	b, err = ScanBusiness(row{"biz_1", "Salon", "UTC", none, "h", int64(0), "{}"})
	if err != nil || len(b.Rules.ReminderOffsets) != 0 {
		t.Fatalf("rules without reminders read as %+v, %v", b.Rules.ReminderOffsets, err)
	}
}
