/** SHA-256 of a text's UTF-8 bytes, as lowercase hex: the digest a pod records for each prompt source. */
export function sha256Hex(text: string): string {
  // node:crypto is loaded when first used, not with this module: `pod prompt` never needs it.
  return process.getBuiltinModule("node:crypto").createHash("sha256").update(text, "utf8").digest("hex");
}
