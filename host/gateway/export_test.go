package gateway

// SessionsBuilt is how many sessions g has built (a go-sdk server and a
// step each), for tests that check what a request may cost.
func SessionsBuilt(g *Gateway) uint64 { return g.built.Load() }
