import { onBothStoreFamilies } from "../../../helpers/both-store-families.ts";
import { uploadStoreSuite } from "./upload-store.suite.ts";

/** The upload store on both platforms' stores. */
onBothStoreFamilies("upload-store", uploadStoreSuite);
