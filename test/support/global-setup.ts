/**
 * Runs once before any test file: restores the raw fixture pairs from test/fixtures/yuv.tar.zst
 * (nothing to do when the build already did and every file matches SHA256SUMS).
 */
import { restoreFixtures } from "../../scripts/fixtures.ts"

export default async function setup(): Promise<void> {
  await restoreFixtures()
}
