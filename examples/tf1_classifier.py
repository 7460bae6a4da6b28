"""A small TF1-era image classifier, as teams still carry it: it runs under TensorFlow 1.x and
breaks, loudly or silently, under TensorFlow 2.21 / Keras 3. `tfmigrate check examples/` finds
every pitfall; `tfmigrate fix` rewrites them.
"""
import tensorflow as tf


def to_rgb(image, label):
    # Inside Dataset.map the static shape is unknown: this branch never fires.
    if image.shape[-1] == 1:
        image = tf.image.grayscale_to_rgb(image)
    return image, label


def make_dataset(images, labels, batch_size=32):
    dataset = tf.data.Dataset.from_tensor_slices((images, labels))
    dataset = dataset.map(to_rgb)
    # `False` is a count of 0: this dataset is empty.
    return dataset.shuffle(1000).repeat(False).batch(batch_size)


class Classifier(tf.keras.Model):
    def __init__(self, num_classes=10):
        super().__init__()
        # Keras 3 does not track tf.Variable attributes: never trained, never saved.
        self.temperature = tf.Variable(1.0, name="temperature")
        self.num_classes = num_classes

    def call(self, images, training=False):
        # tf.layers is gone under Keras 3.
        x = tf.layers.conv2d(images, 32, 3, activation=tf.nn.relu)
        x = tf.layers.max_pooling2d(x, 2, 2)
        x = tf.layers.flatten(x)
        x = tf.layers.dropout(x, rate=0.5, training=training)
        logits = tf.layers.dense(x, 10)
        return logits / self.temperature
