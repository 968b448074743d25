/**
 * Loaded before every test file: the package entry publishes the modules extension files import by name
 * (`@knightcodeai/cli` and its subpaths), as it does for any host. Tests that reach the SDK through an internal
 * path rely on it.
 */
import "@knightcodeai/cli";
