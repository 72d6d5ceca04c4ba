package safetext

import (
	"encoding/json"
	"testing"
)

func TestLineAndBlock(t *testing.T) {
	for _, tc := range []struct {
		in, line, block string
	}{
		{"plain text", "plain text", "plain text"},
		{"héllo 世界 🙂", "héllo 世界 🙂", "héllo 世界 🙂"},
		{"clear\x1b[2J\x1b[Hscreen", `clear\x1b[2J\x1b[Hscreen`, `clear\x1b[2J\x1b[Hscreen`},
		{"two\nlines\tand tab", `two\nlines\tand tab`, "two\nlines\tand tab"},
		{"forged\r[INFO] ok", `forged\r[INFO] ok`, `forged\r[INFO] ok`},
		{"windows\r\nlines", `windows\r\nlines`, "windows\r\nlines"},
		{"nul\x00byte", `nul\x00byte`, `nul\x00byte`},
		{"bell\x07 del\x7f c1\u009b", `bell\x07 del\x7f c1\u009b`, `bell\x07 del\x7f c1\u009b`},
		{"evil\u202egnp.exe", `evil\u202egnp.exe`, `evil\u202egnp.exe`},
		{"iso\u2066late\u2069 mark\u200f", `iso\u2066late\u2069 mark\u200f`, `iso\u2066late\u2069 mark\u200f`},
		{"para\u2028sep", `para\u2028sep`, `para\u2028sep`},
		{"bad\xffutf8", `bad\xffutf8`, `bad\xffutf8`},
		{"zero\u200bwidth\u2060join\ufeffbom\u00adshy", `zero\u200bwidth\u2060join\ufeffbom\u00adshy`, `zero\u200bwidth\u2060join\ufeffbom\u00adshy`},
		{"tag\U000E0041s", `tag\ue0041s`, `tag\ue0041s`},
		{"می\u200cخواهم 👩\u200d💻", "می\u200cخواهم 👩\u200d💻", "می\u200cخواهم 👩\u200d💻"},
	} {
		if got := Line(tc.in); got != tc.line {
			t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.line)
		}
		if got := Block(tc.in); got != tc.block {
			t.Errorf("Block(%q) = %q, want %q", tc.in, got, tc.block)
		}
	}
}

func TestJSONKeepsTheValue(t *testing.T) {
	in := map[string]string{"tool": "evil\u202egnp.exe", "plain": "ok"}
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	safe := JSON(raw)
	if string(safe) != `{"plain":"ok","tool":"evil\u202egnp.exe"}` {
		t.Errorf("JSON = %s, want the override escaped", safe)
	}
	var back map[string]string
	if err := json.Unmarshal(safe, &back); err != nil || back["tool"] != in["tool"] {
		t.Errorf("round trip = %v, %v; want the same value", back, err)
	}
	hidden, err := json.Marshal("zero\u200bwidth tag\U000E0041 joiner👩\u200d💻")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(JSON(hidden)), `"zero\u200bwidth tag\udb40\udc41 joiner👩`+"\u200d"+`💻"`; got != want {
		t.Errorf("JSON = %s, want %s", got, want)
	}
	var s string
	if err := json.Unmarshal(JSON(hidden), &s); err != nil || s != "zero\u200bwidth tag\U000E0041 joiner👩\u200d💻" {
		t.Errorf("round trip = %q, %v", s, err)
	}
	if plain := []byte(`{"a":"b"}`); &JSON(plain)[0] != &plain[0] {
		t.Error("JSON copied text that needed no change")
	}
}
