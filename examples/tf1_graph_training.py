"""TF1 graph-mode code: a shared tower built twice by name."""
import tensorflow.compat.v1 as tf

tf.disable_eager_execution()


def tower(x):
    with tf.variable_scope("tower"):
        w = tf.get_variable("w", [784, 10])
        b = tf.get_variable("b", [10], initializer=tf.zeros_initializer())
        return tf.matmul(x, w) + b


images = tf.placeholder(tf.float32, [None, 784])
augmented = tf.placeholder(tf.float32, [None, 784])
logits = tower(images)
logits_aug = tower(augmented)  # second call: "Variable tower/w already exists"
