import assert from "node:assert/strict";
import { test } from "node:test";
import { withoutShare } from "./host-user.js";

const LISTING = `# file: /w
# owner: 0
# group: 0
user::rwx
user:61000:rwx
group::r-x
mask::rwx
other::r-x
default:user::rwx
default:user:61000:rwx
default:group::r-x
default:mask::rwx
default:other::r-x

# file: /w/made\\012by sandbox
# owner: 61000
# group: 61000
user::rw-
user:61000:rwx\t#effective:rw-
group::r-x\t#effective:r--
mask::rw-
other::r--

# file: /w/theirs
# owner: 0
# group: 0
user::rw-
user:1234:r--
user:61000:rw-
group::r--
mask::rw-
other::---
`;

test("withoutShare drops the uid's entries, masks and defaults only they needed, and gives its files back", () => {
  assert.equal(
    withoutShare(LISTING, 61000, { uid: 0, gid: 5 }),
    `# file: /w
# owner: 0
# group: 0
user::rwx
group::r-x
other::r-x

# file: /w/made\\012by sandbox
# owner: 0
# group: 5
user::rw-
group::r--
other::r--

# file: /w/theirs
# owner: 0
# group: 0
user::rw-
user:1234:r--
group::r--
mask::rw-
other::---

`,
  );
});
