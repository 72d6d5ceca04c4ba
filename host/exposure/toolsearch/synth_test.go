package toolsearch

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// synthCorpus deterministically generates n varied tool documents: 50
// tools per server, names in snake, kebab, camel and dotted styles built
// from a shared verb/noun vocabulary (so many tools share the words of
// any one name, as in a real large catalog), descriptions of one to three
// sentences mixing common words with invented product names, zero to six
// properties, and per-server instructions.
func synthCorpus(n int) []Doc {
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(words []string) string { return words[rng.IntN(len(words))] }
	proper := inventedWords(rng, 3000)

	const toolsPerServer = 50
	var docs []Doc
	seen := map[string]bool{}
	var server, instructions string
	for i := 0; len(docs) < n; i++ {
		if i%toolsPerServer == 0 {
			server = fmt.Sprintf("%s%d", pick(proper), i/toolsPerServer)
			instructions = sentence(rng, proper, 10+rng.IntN(60))
		}
		parts := []string{pick(synthVerbs), pick(synthNouns)}
		if rng.IntN(3) == 0 {
			parts = append(parts, pick(synthNouns))
		}
		name := styleName(parts, rng.IntN(4))
		id := "mcp__" + server + "__" + strings.NewReplacer("-", "_", ".", "_").Replace(name)
		if seen[id] {
			continue
		}
		seen[id] = true
		desc := sentence(rng, proper, 6+rng.IntN(14))
		if rng.IntN(2) == 0 {
			desc += " " + sentence(rng, proper, 5+rng.IntN(20))
		}
		var props []string
		for range rng.IntN(7) {
			props = append(props, styleName([]string{pick(synthNouns), pick(synthAdjectives)}, rng.IntN(4)))
		}
		docs = append(docs, Doc{
			ID:           id,
			Name:         name,
			Server:       server,
			Title:        strings.Join(parts, " "),
			Description:  desc,
			Instructions: instructions,
			Properties:   props,
		})
	}
	return docs
}

// synthQueries mixes the kinds of queries tool_search meets: tasks in a
// few words, exact names in another separator style, and misspellings.
func synthQueries(docs []Doc, n int) []string {
	rng := rand.New(rand.NewPCG(3, 4))
	pick := func(words []string) string { return words[rng.IntN(len(words))] }
	var qs []string
	for i := range n {
		switch i % 4 {
		case 0, 1:
			qs = append(qs, fmt.Sprintf("%s the %s %s for %s", pick(synthVerbs), pick(synthAdjectives), pick(synthNouns), pick(synthNouns)))
		case 2:
			d := docs[rng.IntN(len(docs))]
			qs = append(qs, styleName(strings.Fields(d.Title), rng.IntN(4)))
		case 3:
			w := []byte(pick(synthNouns))
			j := rng.IntN(len(w) - 1)
			w[j], w[j+1] = w[j+1], w[j]
			qs = append(qs, pick(synthVerbs)+" "+string(w))
		}
	}
	return qs
}

// styleName joins words the way tool names are written: snake_case,
// kebab-case, camelCase or dotted.
func styleName(words []string, style int) string {
	switch style {
	case 0:
		return strings.Join(words, "_")
	case 1:
		return strings.Join(words, "-")
	case 2:
		var b strings.Builder
		for i, w := range words {
			if i > 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
			b.WriteString(w)
		}
		return b.String()
	}
	return strings.Join(words, ".")
}

func sentence(rng *rand.Rand, proper []string, words int) string {
	pools := [][]string{synthVerbs, synthNouns, synthNouns, synthAdjectives, synthGlue, synthGlue, proper}
	out := make([]string, words)
	for i := range out {
		pool := pools[rng.IntN(len(pools))]
		out[i] = pool[rng.IntN(len(pool))]
	}
	out[0] = strings.ToUpper(out[0][:1]) + out[0][1:]
	return strings.Join(out, " ") + "."
}

// inventedWords makes pronounceable names (products, projects) so the
// vocabulary grows with the catalog as it does in real ones.
func inventedWords(rng *rand.Rand, n int) []string {
	syllables := []string{"ka", "lo", "mi", "zu", "tra", "ven", "qui", "sol", "dar", "ix", "op", "el", "nor", "bry", "cas", "fen"}
	words := make([]string, n)
	for i := range words {
		var b strings.Builder
		for range 2 + rng.IntN(3) {
			b.WriteString(syllables[rng.IntN(len(syllables))])
		}
		words[i] = b.String()
	}
	return words
}

var (
	synthVerbs = strings.Fields(`get fetch list create update delete remove search find query read write
		send post upload download sync export import archive restore compress extract convert translate
		summarize classify validate verify schedule cancel approve reject assign merge split render resize
		encrypt decrypt sign publish subscribe notify monitor inspect analyze forecast index tag label move
		copy rename share invite start stop restart deploy rollback build test lint format backup clone`)
	synthNouns = strings.Fields(`file folder document image photo video audio message email thread channel
		user group team project issue ticket pull request commit branch repository release build pipeline job
		deployment cluster node pod container service secret variable config setting invoice payment order
		customer account subscription plan report dashboard chart metric alert incident log trace event
		calendar meeting task note page comment label tag record table row column database schema query
		bucket object key certificate domain endpoint webhook token session workflow form survey contact lead`)
	synthAdjectives = strings.Fields(`new old large small recent archived public private shared pending
		active inactive failed scheduled draft final remote local encrypted compressed daily weekly monthly
		open closed urgent primary secondary default custom external internal`)
	synthGlue = strings.Fields(`the a for with from into by of and or to in on using when if all each any
		this its their returns optionally supports`)
)
