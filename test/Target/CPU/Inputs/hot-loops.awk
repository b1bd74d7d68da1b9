# Counts the innermost loops of an x86 assembly listing that contain the
# instruction `want`, the instructions matching the regular expression
# `banned` inside those loops, and (when `need` is given) those loops
# without an instruction matching `need`. A loop is the code from a label
# to a branch back to it.
{ lines[NR] = $0 }
/^\.LBB[0-9_]+:/ { sub(":", "", $1); at[$1] = NR }
/^\tj[a-z]+\t\.LBB[0-9_]+$/ {
  target = $2
  if (target in at && at[target] < NR) {
    found = 0; bad = 0; inner = 1; has = 0
    for (i = at[target] + 1; i < NR; i++) {
      if (lines[i] ~ /^\.LBB[0-9_]+:/) { inner = 0; break }
      if (lines[i] ~ "\t" want "\t") found = 1
      if (lines[i] ~ "\t(" banned ")") bad++
      if (need != "" && lines[i] ~ "\t(" need ")") has = 1
    }
    if (inner && found) { loops++; banned_total += bad; if (!has) lacking++ }
  }
}
END {
  printf "hot loops with %s: %d\n", want, loops
  printf "banned instructions in them: %d\n", banned_total
  if (need != "")
    printf "of them without %s: %d\n", need, lacking
}
