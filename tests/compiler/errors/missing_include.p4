// preprocess: an #include that no include folder has
#include "nowhere.p4"
