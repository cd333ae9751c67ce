// The Scorer with its native library and model store, the library kept visible: the report
// needs its dispatch functions and the path it was loaded from, besides scoring.
import { Layer } from "effect"
import { ModelStore, NativeScorerLibrary, Scorer } from "../scorer/index.ts"

export const reportScorerLayer = Scorer.DefaultWithoutDependencies.pipe(
  Layer.provideMerge(ModelStore.DefaultWithoutDependencies),
  Layer.provideMerge(NativeScorerLibrary.Default)
)
