package engine

// protocolReason classifies errors of the spipe protocol; "" if err is
// not one.
func protocolReason(err error) string {
	return ""
}
