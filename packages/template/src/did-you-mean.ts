// The one did-you-mean rule of every package; check-template.ts calls it by its old name.
export { didYouMeanSuffix as suggestion } from "@insomnia/errors";
