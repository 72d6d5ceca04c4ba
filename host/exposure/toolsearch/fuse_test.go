package toolsearch

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFuseKeepsNamedToolsFirstAndAgreementWins(t *testing.T) {
	lexical := []Hit{
		{ID: "named", Score: 100, Named: true},
		{ID: "a", Score: 3},
		{ID: "b", Score: 2},
		{ID: "fill", Score: 0},
	}
	// The semantic ranking puts "named" last and prefers "c" and "b";
	// "b" is in both lists, so it beats "a" (lexical only) and "c"
	// (semantic only). "fill" came only from topping up: not evidence.
	semantic := []string{"c", "b", "fill", "a", "named"}
	got := Fuse(lexical, semantic, 4)
	var ids []string
	for _, h := range got {
		ids = append(ids, h.ID)
	}
	if diff := cmp.Diff([]string{"named", "b", "a", "c"}, ids); diff != "" {
		t.Errorf("Fuse (-want +got):\n%s", diff)
	}
	if got := Fuse(lexical, semantic, 1); len(got) != 1 || got[0].ID != "named" {
		t.Errorf("Fuse(limit 1) = %v, want the named tool alone", got)
	}
}
