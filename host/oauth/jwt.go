package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"hash"
	"math/big"
)

// signingKey is a private key and the JWS algorithm it signs with.
type signingKey struct {
	key crypto.Signer
	alg string
}

// parseSigningKey reads a PEM private key (PKCS #8, SEC 1 EC or PKCS #1
// RSA) and picks its algorithm: ES256/384/512 by curve, RS256, EdDSA.
func parseSigningKey(pemBytes []byte) (*signingKey, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, errors.New("no PEM block found: the key file must hold a PEM private key")
	}
	var key any
	var err error
	switch block.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("parsing the %s: %w", block.Type, err)
	}
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P256():
			return &signingKey{k, "ES256"}, nil
		case elliptic.P384():
			return &signingKey{k, "ES384"}, nil
		case elliptic.P521():
			return &signingKey{k, "ES512"}, nil
		}
		return nil, fmt.Errorf("unsupported EC curve %s", k.Curve.Params().Name)
	case *rsa.PrivateKey:
		return &signingKey{k, "RS256"}, nil
	case ed25519.PrivateKey:
		return &signingKey{k, "EdDSA"}, nil
	}
	return nil, fmt.Errorf("unsupported private key type %T", key)
}

// sign returns the compact JWS of claims.
func (k *signingKey) sign(claims map[string]any) (string, error) {
	header, err := json.Marshal(map[string]string{"alg": k.alg, "typ": "JWT"})
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	input := enc.EncodeToString(header) + "." + enc.EncodeToString(payload)
	var sig []byte
	switch key := k.key.(type) {
	case ed25519.PrivateKey:
		sig = ed25519.Sign(key, []byte(input))
	case *rsa.PrivateKey:
		sum := sha256.Sum256([]byte(input))
		sig, err = rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	case *ecdsa.PrivateKey:
		sig, err = signECDSA(key, []byte(input))
	default:
		err = fmt.Errorf("unsupported key type %T", k.key)
	}
	if err != nil {
		return "", fmt.Errorf("signing the client assertion: %w", err)
	}
	return input + "." + enc.EncodeToString(sig), nil
}

// signECDSA produces the JWS form of an ECDSA signature: r and s as
// fixed-size big-endian integers, not ASN.1.
func signECDSA(key *ecdsa.PrivateKey, input []byte) ([]byte, error) {
	var h hash.Hash
	switch key.Curve {
	case elliptic.P256():
		h = sha256.New()
	case elliptic.P384():
		h = sha512.New384()
	default:
		h = sha512.New()
	}
	h.Write(input)
	r, s, err := ecdsa.Sign(rand.Reader, key, h.Sum(nil))
	if err != nil {
		return nil, err
	}
	size := (key.Curve.Params().BitSize + 7) / 8
	out := make([]byte, 2*size)
	r.FillBytes(out[:size])
	s.FillBytes(out[size:])
	return out, nil
}

// verifyECDSA checks a JWS ECDSA signature; tests use it.
func verifyECDSA(pub *ecdsa.PublicKey, input, sig []byte) bool {
	size := (pub.Curve.Params().BitSize + 7) / 8
	if len(sig) != 2*size {
		return false
	}
	sum := sha256.Sum256(input)
	return ecdsa.Verify(pub, sum[:], new(big.Int).SetBytes(sig[:size]), new(big.Int).SetBytes(sig[size:]))
}
