package business

import "testing"

func TestValidCountry(t *testing.T) {
	for s, want := range map[string]bool{
		"GB": true, "IE": true, "US": true, "DE": true, "FR": true, "ES": true, "NL": true, "AU": true, "NZ": true, "JP": true,
		"": false, "gb": false, "UK": false, "XX": false, "ZZ": false, "EU": false, "QO": false, "AA": false,
		"G": false, "GBR": false, "G1": false, "001": false, "ÉÉ": false,
		"AC": false, "EA": false, "DD": false, "ZR": false, "TP": false, "SU": false, "XK": false, "KO": false,
		"AQ": true, "BV": true, "CD": true, "TL": true, "MM": true, "SS": true, "CW": true, "AX": true,
	} {
		if got := validCountry(s); got != want {
			t.Errorf("validCountry(%q) = %v, want %v", s, got, want)
		}
	}
}
