package spelling

import "testing"

func TestDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"comand", "command", 1}, {"kitten", "sitting", 3}, {"ünï", "uni", 2},
	} {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestClosest(t *testing.T) {
	names := []string{"on-request", "never", "untrusted"}
	for got, want := range map[string]string{
		"on_request": "on-request", "Never": "never", "yes": "", "untrustd": "untrusted", "": "",
	} {
		if c := Closest(got, names); c != want {
			t.Errorf("Closest(%q) = %q, want %q", got, c, want)
		}
	}
}
