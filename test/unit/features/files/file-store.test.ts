import { onBothStoreFamilies } from "../../../helpers/both-store-families.ts";
import { fileStoreSuite } from "./file-store.suite.ts";

/** The file store on both platforms' stores. */
onBothStoreFamilies("file-store", fileStoreSuite);
