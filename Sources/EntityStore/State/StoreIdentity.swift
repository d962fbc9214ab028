import HashTreeCollections
/// A token that tells states of one store apart from those of another.
final class StoreIdentity: Sendable {}
