/**
 * Signed-note test vectors, copied as data from Go's golang.org/x/mod/sumdb/note,
 * note_test.go (BSD-style licence, Copyright 2019 The Go Authors):
 * https://github.com/golang/mod/blob/master/sumdb/note/note_test.go
 */
export const peterKey = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
export const enochKey = 'EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop';
/** Go's private-key form: `PRIVATE+KEY+<name>+<id>+base64(0x01 ‖ 32-byte Ed25519 seed)`. */
export const peterSigner =
  'PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz';

export const text =
  'If you think cryptography is the answer to your problem,\n' +
  "then you don't know what your problem is.\n";
export const peterSig =
  '— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n';
export const enochSig =
  '— EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n';

/** Keys Go refuses: a wrong-length key with an adjusted hash, an unknown algorithm. */
export const badKeys = [
  'PeterNeumann+cc469956+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TWBADKEY==',
  'PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW',
];
