package strict

// PartHashesKey is the payload key of a write that changes several
// objects at once (a two-way relation changes both databases): a map from
// each object's id to its "previousHash" and "resultHash" as full
// digests. The ledger keeps them whole; every answer, a replay's too,
// shows them as aliases from the coordinator's one pool, like the
// request's own previousHash and resultHash.
const PartHashesKey = "hashes"

// aliasParts turns the full digests of a PartHashesKey value into
// aliases; anything else in it is left out.
func (c *Coordinator) aliasParts(v any) map[string]any {
	parts, _ := v.(map[string]any)
	out := make(map[string]any, len(parts))
	for id, p := range parts {
		hs, _ := p.(map[string]any)
		m := map[string]any{}
		for _, k := range []string{"previousHash", "resultHash"} {
			if d, ok := hs[k].(string); ok {
				if a := c.aliases.Alias(d); a != "" {
					m[k] = a
				}
			}
		}
		out[id] = m
	}
	return out
}
